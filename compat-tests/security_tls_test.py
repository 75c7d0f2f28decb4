"""TLS listeners (issue 15): SSL and mTLS served through OpenSSL, driven by
real clients, with certificates the test makes with the `openssl` CLI (a CA,
a server certificate for localhost/127.0.0.1, a client certificate, an
expired one, one from a CA the broker does not trust).

Each broker has a PLAINTEXT listener (the harness's) and a TLS one:
  - "SSL": a PEM key store file with an encrypted key (ssl.key.password),
    no client authentication; confluent-kafka and kafka-python produce,
    consume (a group, with commits) and use the admin API; Fetch responses
    of megabytes go through TLS;
  - "CLIENT" mapped to SSL (listener.security.protocol.map) with its keys
    under listener.name.client.ssl.*: PKCS12 key and trust stores,
    ssl.client.auth=required, a mapping rule; the clients with PEM and
    PKCS12 client key stores; the principal is in the broker's log;
  - inline PEM (ssl.keystore.key, ssl.keystore.certificate.chain,
    ssl.truststore.certificates), ssl.client.auth=requested: a client
    without a certificate is served as User:ANONYMOUS, one with a
    certificate as User:<its DN>.
ssl.enabled.protocols=TLSv1.2 with one ssl.cipher.suites entry in Java's
IANA name: a TLS 1.3 client refused, a TLS 1.2 client gets that suite; an
idle TLS connection closed after connections.max.idle.ms.
Refusals, each with the broker still serving afterwards: an unknown CA's
client certificate, an expired one, no certificate where one is required,
a plaintext client on the TLS port, a TLS client on the plaintext port.
A three-broker cluster (etcd, cluster_harness) replicating over PLAINTEXT
serves TLS clients on every broker's SSL listener; another replicates over
its SSL listener with mTLS between the brokers; in a third the brokers'
certificates name another host and the fetchers refuse their leaders.
The Java client and Kafka's CLI tools (kafka-topics, the console producer
and consumer with a group) over mTLS, with Kafka 4.1.1's jars.
Startup refusals: a JKS key store (with how to convert it), an SSL listener
without a key store, a wrong PKCS12 password, a SASL_SSL listener without
its JAAS line.

usage: /usr/bin/python3 security_tls_test.py <runnel binary> [<kafka jar cache dir>]
"""

import re
import socket
import ssl
import subprocess
import sys
import time
import uuid

import kafka
from confluent_kafka import KafkaException, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

import kafka_wire as w
from cluster_harness import Cluster
from kafka_harness import kafka_classpath
from runnel_harness import Runnel, recv_frame, run_tests
from security_refusal_test import refused as startup_refused
from test_certs import Certs

BOUND = 90.0  # seconds for anything a client waits for (an ASan broker on a loaded 2-core machine)
KP = {"api_version_auto_timeout_ms": 30000, "request_timeout_ms": 30000}
RECORDS = 2000
VALUE_SIZE = 2500  # 5 MB in all: Fetch responses larger than a TLS copy chunk (256 KiB)

CERTS = None


class TlsBroker(Runnel):
    """Runnel with a PLAINTEXT listener and a TLS listener named `tls_name`."""

    def __init__(self, tls_name, overrides):
        props = {"listeners": "PLAINTEXT://127.0.0.1:0,%s://127.0.0.1:0" % tls_name}
        props.update(overrides)
        super().__init__(overrides=props, prefix="runnel-tls-")
        self.tls_name = tls_name
        self.tls_port = None

    def start(self):
        super().start()
        m = re.search(r"listening on %s://127\.0\.0\.1:(\d+) \(SSL\)" % self.tls_name, self.log_text())
        assert m, "no TLS listener in the log"
        self.tls_port = int(m.group(1))
        return self

    @property
    def tls_bootstrap(self):
        return "127.0.0.1:%d" % self.tls_port


# -- clients ------------------------------------------------------------------

def confluent_config(broker, cert=None, p12=None):
    c = {"bootstrap.servers": broker.tls_bootstrap, "broker.address.family": "v4", "security.protocol": "SSL",
         "ssl.ca.location": CERTS.ca[0], "ssl.endpoint.identification.algorithm": "https"}
    if cert:
        c["ssl.certificate.location"], c["ssl.key.location"] = cert
    if p12:
        c["ssl.keystore.location"], c["ssl.keystore.password"] = p12
    return c


def kafka_python_config(broker, cert=None):
    c = dict(KP, bootstrap_servers=broker.tls_bootstrap, security_protocol="SSL", ssl_cafile=CERTS.ca[0],
             ssl_check_hostname=True)
    if cert:
        c["ssl_certfile"], c["ssl_keyfile"] = cert
    return c


def value(i):
    return bytes(((i * 31 + j) & 0xFF) for j in range(VALUE_SIZE))


def confluent_round_trip(config, records=RECORDS):
    """Admin, produce (acks=all), a group consume with commits, over `config`."""
    topic = "tls-" + uuid.uuid4().hex[:8]
    admin = AdminClient(config)
    fs = admin.create_topics([NewTopic(topic, 3, 1)], operation_timeout=30, request_timeout=BOUND)
    fs[topic].result(BOUND)
    md = admin.list_topics(topic, timeout=BOUND)
    assert len(md.topics[topic].partitions) == 3, md.topics[topic].partitions
    # The broker advertises its TLS listener to a client that came in on it.
    assert all(b.port == int(config["bootstrap.servers"].split(":")[1]) for b in md.brokers.values()), md.brokers

    errors = []
    p = Producer(dict(config, **{"acks": "all", "linger.ms": 5}))
    for i in range(records):
        p.produce(topic, value(i), str(i).encode(), partition=i % 3, on_delivery=lambda e, m: e and errors.append(e))
        p.poll(0)
    assert p.flush(BOUND) == 0, "records undelivered"
    assert not errors, errors[:3]

    group = "g-" + topic
    c = Consumer(dict(config, **{"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}))
    c.subscribe([topic])
    got = {}
    deadline = time.monotonic() + BOUND
    try:
        while len(got) < records and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            assert not m.error(), m.error()
            got[int(m.key())] = m.value()
        c.commit(asynchronous=False)
        committed = c.committed([TopicPartition(topic, i) for i in range(3)], timeout=BOUND)
    finally:
        c.close()
    assert len(got) == records, "%d of %d records consumed" % (len(got), records)
    for i in range(records):
        assert got[i] == value(i), "record %d differs" % i
    assert sum(tp.offset for tp in committed) == records, committed
    groups = admin.list_groups(timeout=BOUND)  # confluent-kafka 1.7's ListGroups
    assert group in [g.id for g in groups], groups
    admin.delete_topics([topic], operation_timeout=30)[topic].result(BOUND)


def kafka_python_round_trip(config, records=300):
    topic = "kp-" + uuid.uuid4().hex[:8]
    p = kafka.KafkaProducer(acks="all", **config)
    futures = [p.send(topic, value=value(i), key=str(i).encode()) for i in range(records)]
    p.flush(BOUND)
    for f in futures:
        f.get(timeout=BOUND)
    p.close(10)
    c = kafka.KafkaConsumer(topic, group_id="kp-" + topic, auto_offset_reset="earliest", enable_auto_commit=False,
                            **config)
    got = {}
    deadline = time.monotonic() + BOUND
    try:
        while len(got) < records and time.monotonic() < deadline:
            for batch in c.poll(timeout_ms=500).values():
                for m in batch:
                    got[int(m.key)] = m.value
        c.commit()
    finally:
        c.close()
    assert len(got) == records, "%d of %d records consumed" % (len(got), records)
    assert all(got[i] == value(i) for i in range(records))


def tls_context(cert=None):
    ctx = ssl.create_default_context(cafile=CERTS.ca[0])
    if cert:
        ctx.load_cert_chain(cert[0], cert[1])
    return ctx


def tls_api_versions(port, cert=None):
    """ApiVersions v0 over TLS; the error code and key count, or raises."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        with tls_context(cert).wrap_socket(raw, server_hostname="localhost") as s:
            s.sendall(w.api_versions_v0(5))
            frame = recv_frame(s)
    err, keys = w.parse_api_versions_v0(frame[4:])
    return err, len(keys)


def assert_served(broker, cert=None):
    """The broker is up: TLS and plaintext both answer."""
    assert broker.alive(), "the broker exited"
    err, n = tls_api_versions(broker.tls_port, cert)
    assert err == 0 and n > 0, (err, n)
    with w.Connection(broker.port) as c:
        err, keys = w.parse_api_versions_v0(c.call(w.api_versions_v0(3), 3))
        assert err == 0 and keys


def assert_tls_refused(broker, cert):
    """A TLS client with `cert` gets no Kafka response: the handshake fails,
    or (TLS 1.3, where the client's certificate is checked after the client
    finishes) the first read fails."""
    try:
        tls_api_versions(broker.tls_port, cert)
    except (ssl.SSLError, ConnectionError) as e:
        return str(e)
    raise AssertionError("a client with %s was served" % (cert,))


def wait_for_log(broker, pattern):
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        m = re.search(pattern, broker.log_text())
        if m:
            return m
        time.sleep(0.1)
    raise AssertionError("not in the broker's log: %s" % pattern)


# -- scenarios ----------------------------------------------------------------

def pem_ssl_broker():
    return TlsBroker("SSL", {"ssl.keystore.type": "PEM", "ssl.keystore.location": CERTS.server_pem,
                             "ssl.key.password": "keypass"})


def test_ssl_pem_keystore():
    with pem_ssl_broker() as b:
        confluent_round_trip(confluent_config(b))
        kafka_python_round_trip(kafka_python_config(b))
        assert_served(b)
        assert "listener SSL: Fetch records are read into memory and encrypted by OpenSSL" in b.log_text()


def test_wrong_transport_refused():
    with pem_ssl_broker() as b:
        # A plaintext Kafka client on the TLS port: its ApiVersions is not a
        # ClientHello; at most a TLS alert comes back, never a Kafka frame.
        with socket.create_connection(("127.0.0.1", b.tls_port), timeout=30) as s:
            s.sendall(w.api_versions_v0(9))
            got = b""
            while True:
                try:
                    chunk = s.recv(4096)
                except ConnectionError:
                    break
                if not chunk:
                    break
                got += chunk
            assert got == b"" or got[0] == 0x15, "not a TLS alert: %r" % got[:16]  # 0x15: alert record
        wait_for_log(b, r"failed authentication with 127\.0\.0\.1:\d+ on listener SSL")
        # A TLS client on the plaintext port: its ClientHello reads as a
        # frame larger than socket.request.max.bytes, and the broker closes.
        with socket.create_connection(("127.0.0.1", b.port), timeout=30) as raw:
            try:
                with tls_context().wrap_socket(raw, server_hostname="localhost") as s:
                    s.sendall(w.api_versions_v0(5))
                    recv_frame(s)
                raise AssertionError("a TLS client was served on the plaintext port")
            except (ssl.SSLError, ConnectionError):
                pass
        assert_served(b)


def mtls_broker():
    # A custom listener name mapped to SSL, every key under its prefix.
    p = "listener.name.client."
    return TlsBroker("CLIENT", {
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:SSL,CONTROLLER:PLAINTEXT",
        p + "ssl.keystore.type": "PKCS12", p + "ssl.keystore.location": CERTS.server_p12,
        p + "ssl.keystore.password": "storepass",
        p + "ssl.truststore.type": "PKCS12", p + "ssl.truststore.location": CERTS.trust_p12,
        p + "ssl.truststore.password": "trustpass",
        p + "ssl.client.auth": "required",
        p + "ssl.principal.mapping.rules": "RULE:^CN=([^,]*),OU=eng,.*$/$1/U,DEFAULT",
    })


def test_mtls_pkcs12():
    with mtls_broker() as b:
        confluent_round_trip(confluent_config(b, cert=CERTS.client))
        wait_for_log(b, r"client certificate CN=client,OU=eng,O=Runnel,C=US is principal User:CLIENT")
        confluent_round_trip(confluent_config(b, p12=(CERTS.client_p12, "clientpass")), records=200)
        kafka_python_round_trip(kafka_python_config(b, cert=CERTS.client))
        assert_served(b, CERTS.client)


def test_mtls_refusals():
    with mtls_broker() as b:
        for cert, why in [(CERTS.stranger, "a certificate from an unknown CA"), (CERTS.expired, "an expired certificate"),
                          (None, "no certificate")]:
            assert_tls_refused(b, cert)
            assert_served(b, CERTS.client)
        # Each refusal logged with the check that failed.
        text = b.log_text()
        failed = "certificate verify failed (SSL routines): "
        assert failed + "unable to get local issuer certificate" in text, "no unknown-CA refusal logged"
        assert failed + "certificate has expired" in text, "no expiry refusal logged"
        assert "peer did not return a certificate" in text, "no missing-certificate refusal logged"
        # librdkafka with the unknown CA's certificate: refused, and nothing served.
        admin = AdminClient(dict(confluent_config(b, cert=CERTS.stranger), **{"socket.timeout.ms": 10000}))
        try:
            admin.list_topics(timeout=10)
            raise AssertionError("librdkafka with an unknown CA's certificate was served")
        except KafkaException:
            pass
        assert_served(b, CERTS.client)


def java(classpath, main, *args, stdin=None):
    cmd = ["java", "-Dlog4j2.level=ERROR", "-cp", classpath, main] + list(args)
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, "%s %s exited %d:\n%s%s" % (main.rsplit(".", 1)[1], " ".join(args), out.returncode,
                                                            out.stdout[-3000:], out.stderr[-3000:])
    return out.stdout


def java_round_trip(classpath, bootstrap, config, prefix):
    """Kafka's CLI tools with the client config file `config`: kafka-topics
    creates and lists a topic, the console producer writes 100 lines with
    acks=all, the console consumer reads them back in a group."""
    topic = prefix + "-" + uuid.uuid4().hex[:8]
    java(classpath, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
         "--command-config", config, "--create", "--topic", topic, "--partitions", "2")
    listed = java(classpath, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
                  "--command-config", config, "--list")
    assert topic in listed.split(), listed
    lines = ["%s-record-%d" % (prefix, i) for i in range(100)]
    java(classpath, "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", bootstrap,
         "--topic", topic, "--producer.config", config, "--producer-property", "acks=all",
         stdin="\n".join(lines) + "\n")
    out = java(classpath, "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server",
               bootstrap, "--topic", topic, "--group", "java-" + topic, "--from-beginning",
               "--max-messages", str(len(lines)), "--timeout-ms", "90000", "--consumer.config", config)
    assert sorted(out.split()) == sorted(lines), out[-2000:]


def test_java_clients():
    classpath = kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None)
    with mtls_broker() as b:
        config = CERTS.path("java-client.properties")
        with open(config, "w") as f:
            # Kafka's own PEM support on the client side: no JKS needed.
            f.write("security.protocol=SSL\n"
                    "ssl.truststore.type=PEM\nssl.truststore.location=%s\n"
                    "ssl.keystore.type=PEM\nssl.keystore.location=%s\n"
                    "default.api.timeout.ms=90000\nrequest.timeout.ms=30000\n" % (CERTS.ca[0], CERTS.client_keystore_pem))
        java_round_trip(classpath, b.tls_bootstrap, config, "java")
        wait_for_log(b, r"client certificate CN=client,OU=eng,O=Runnel,C=US is principal User:CLIENT")


def test_inline_pem_requested():
    with TlsBroker("SSL", {"ssl.keystore.type": "PEM",
                           "ssl.keystore.key": CERTS.read(CERTS.server[1]),
                           "ssl.keystore.certificate.chain": CERTS.read(CERTS.server[0]) + CERTS.read(CERTS.ca[0]),
                           "ssl.truststore.type": "PEM", "ssl.truststore.certificates": CERTS.read(CERTS.ca[0]),
                           "ssl.client.auth": "requested"}) as b:
        assert tls_api_versions(b.tls_port)[0] == 0  # no certificate: User:ANONYMOUS, served
        assert tls_api_versions(b.tls_port, CERTS.client)[0] == 0
        wait_for_log(b, r"client certificate CN=client,OU=eng,O=Runnel,C=US is principal "
                        r"User:CN=client,OU=eng,O=Runnel,C=US")
        assert_tls_refused(b, CERTS.stranger)  # requested, but a certificate sent must verify
        confluent_round_trip(confluent_config(b), records=200)
        # DescribeConfigs shows the ssl.* keys as Kafka does: the key and the
        # certificates are passwords, so sensitive and without a value.
        admin = AdminClient(confluent_config(b))
        res = ConfigResource(ConfigResource.Type.BROKER, "1")
        entries = admin.describe_configs([res], request_timeout=BOUND)[res].result(BOUND)
        for k in ("ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates"):
            assert entries[k].is_sensitive and entries[k].value is None, (k, entries[k].value)
        assert entries["ssl.client.auth"].value == "requested", entries["ssl.client.auth"]
        assert entries["ssl.enabled.protocols"].value == "TLSv1.2,TLSv1.3", entries["ssl.enabled.protocols"]
        assert_served(b)


def test_protocols_ciphers_idle():
    """ssl.enabled.protocols and ssl.cipher.suites (Java's IANA name) reach
    OpenSSL; connections.max.idle.ms closes an idle TLS connection."""
    with TlsBroker("SSL", {"ssl.keystore.type": "PEM", "ssl.keystore.location": CERTS.server_pem,
                           "ssl.key.password": "keypass", "ssl.enabled.protocols": "TLSv1.2",
                           "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                           "connections.max.idle.ms": "2000"}) as b:
        tls13 = tls_context()
        tls13.minimum_version = ssl.TLSVersion.TLSv1_3
        with socket.create_connection(("127.0.0.1", b.tls_port), timeout=30) as raw:
            try:
                tls13.wrap_socket(raw, server_hostname="localhost").close()
                raise AssertionError("a TLS 1.3 handshake succeeded with ssl.enabled.protocols=TLSv1.2")
            except (ssl.SSLError, ConnectionError):
                pass
        with socket.create_connection(("127.0.0.1", b.tls_port), timeout=30) as raw:
            with tls_context().wrap_socket(raw, server_hostname="localhost") as s:
                name, version, _ = s.cipher()
                assert version == "TLSv1.2" and name == "ECDHE-ECDSA-AES256-GCM-SHA384", s.cipher()
                s.sendall(w.api_versions_v0(5))
                assert w.parse_api_versions_v0(recv_frame(s)[4:])[0] == 0
                # Idle past connections.max.idle.ms (plus Kafka's poll): closed by the broker.
                start = time.monotonic()
                try:
                    closed = s.recv(1) == b""
                except (ssl.SSLError, ConnectionError):
                    closed = True
                assert closed and time.monotonic() - start < BOUND, "the idle TLS connection stayed open"
        wait_for_log(b, r"closing connection from 127\.0\.0\.1:\d+: idle for more than connections\.max\.idle\.ms")
        assert_served(b)


def test_cluster_ssl_clients():
    """Three brokers on etcd, each with a PLAINTEXT listener (replication,
    inter.broker.listener.name) and an SSL one: a client that bootstraps on
    one broker's SSL listener learns every broker's SSL endpoint and
    produces and consumes replication factor 3 over TLS."""
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "inter.broker.listener.name": "PLAINTEXT",
                 "ssl.keystore.type": "PKCS12", "ssl.keystore.location": CERTS.server_p12,
                 "ssl.keystore.password": "storepass"}
    with Cluster(3, overrides=overrides) as c:
        ssl_ports = {}
        for i, b in c.brokers.items():
            m = re.search(r"listening on SSL://127\.0\.0\.1:(\d+) \(SSL\)", b.log_text())
            assert m, "node %d: no SSL listener in the log" % i
            ssl_ports[i] = int(m.group(1))
        config = {"bootstrap.servers": "127.0.0.1:%d" % ssl_ports[1], "broker.address.family": "v4",
                  "security.protocol": "SSL", "ssl.ca.location": CERTS.ca[0]}
        admin = AdminClient(config)
        topic = "cluster-tls"
        admin.create_topics([NewTopic(topic, 3, 3)], operation_timeout=30, request_timeout=BOUND)[topic].result(BOUND)
        md = admin.list_topics(topic, timeout=BOUND)
        assert {b.id: b.port for b in md.brokers.values()} == ssl_ports, (md.brokers, ssl_ports)
        errors = []
        p = Producer(dict(config, **{"acks": "all"}))
        for i in range(300):
            p.produce(topic, value(i), str(i).encode(), partition=i % 3, on_delivery=lambda e, m: e and errors.append(e))
        assert p.flush(BOUND) == 0 and not errors, errors[:3]
        consumer = Consumer(dict(config, **{"group.id": "g-cluster-tls", "auto.offset.reset": "earliest"}))
        consumer.subscribe([topic])
        got = {}
        deadline = time.monotonic() + BOUND
        try:
            while len(got) < 300 and time.monotonic() < deadline:
                m = consumer.poll(0.5)
                if m is not None and not m.error():
                    got[int(m.key())] = m.value()
        finally:
            consumer.close()
        assert len(got) == 300 and all(got[i] == value(i) for i in range(300)), len(got)


def test_cluster_replicates_over_mtls():
    """Three brokers replicating over their SSL listener (inter.broker.listener.name)
    with ssl.client.auth=required: each follower's fetcher presents the
    broker's own certificate and checks the leader's against its address
    (ssl.endpoint.identification.algorithm=https). acks=all with
    min.insync.replicas=3 succeeds only if both followers fetch."""
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "inter.broker.listener.name": "SSL",
                 "ssl.keystore.type": "PKCS12", "ssl.keystore.location": CERTS.server_p12,
                 "ssl.keystore.password": "storepass", "ssl.truststore.type": "PEM",
                 "ssl.truststore.location": CERTS.ca[0], "ssl.client.auth": "required"}
    with Cluster(3, overrides=overrides) as c:
        config = {"bootstrap.servers": c.bootstrap(), "broker.address.family": "v4"}
        admin = AdminClient(config)
        topic = "replicated-over-tls"
        admin.create_topics([NewTopic(topic, 3, 3, config={"min.insync.replicas": "3"})], operation_timeout=30,
                            request_timeout=BOUND)[topic].result(BOUND)
        errors = []
        p = Producer(dict(config, **{"acks": "all", "message.timeout.ms": 60000}))
        for i in range(300):
            p.produce(topic, value(i), str(i).encode(), partition=i % 3, on_delivery=lambda e, m: e and errors.append(e))
        assert p.flush(BOUND) == 0 and not errors, errors[:3]
        for i, b in c.brokers.items():
            text = b.log_text()
            assert "replica fetchers connect over TLS on listener SSL (host name checked: yes)" in text, i
            assert "client certificate CN=localhost,O=Runnel is principal User:CN=localhost,O=Runnel" in text, i
            assert "TLS handshake with broker" not in text, "node %d: a fetcher's handshake failed" % i


def test_cluster_checks_leader_host():
    """Brokers whose certificate names another host: each follower's fetcher
    refuses its leader (ssl.endpoint.identification.algorithm=https), and
    acks=all with min.insync.replicas=3 is not acknowledged."""
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "inter.broker.listener.name": "SSL",
                 "ssl.keystore.type": "PEM", "ssl.keystore.location": CERTS.elsewhere_pem,
                 "ssl.truststore.type": "PEM", "ssl.truststore.location": CERTS.ca[0]}
    with Cluster(3, overrides=overrides) as c:
        admin = AdminClient({"bootstrap.servers": c.bootstrap(), "broker.address.family": "v4"})
        topic = "wrong-host"
        admin.create_topics([NewTopic(topic, 1, 3, config={"min.insync.replicas": "3"})], operation_timeout=30,
                            request_timeout=BOUND)[topic].result(BOUND)
        deadline = time.monotonic() + BOUND
        refused = None
        while refused is None and time.monotonic() < deadline:
            for b in c.brokers.values():
                refused = refused or re.search(r"TLS handshake with broker 127\.0\.0\.1:\d+ failed: .*IP address mismatch",
                                               b.log_text())
            time.sleep(0.2)
        assert refused, "no fetcher refused a leader whose certificate names another host"
        errors = []
        p = Producer({"bootstrap.servers": c.bootstrap(), "broker.address.family": "v4", "acks": "all",
                      "message.timeout.ms": 5000})
        p.produce(topic, b"x", on_delivery=lambda e, m: errors.append(e))
        p.flush(BOUND)
        assert errors and errors[0] is not None, "acknowledged without its followers: %s" % errors


def test_startup_refusals():
    ssl_listener = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"}
    startup_refused(dict(ssl_listener, **{"ssl.keystore.location": CERTS.jks, "ssl.keystore.password": "x"}),
                    "keytool -importkeystore")
    startup_refused(ssl_listener, "needs a key store")
    startup_refused(dict(ssl_listener, **{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": CERTS.server_p12,
                                          "ssl.keystore.password": "wrong"}), "wrong ssl.keystore.password")
    startup_refused({"listeners": "SASL_SSL://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN"},
                    "listener.name.sasl_ssl.plain.sasl.jaas.config")


if __name__ == "__main__":
    CERTS = Certs()
    try:
        code = run_tests([
            ("SSL with a PEM key store: confluent-kafka and kafka-python", test_ssl_pem_keystore),
            ("plaintext on the TLS port and TLS on the plaintext port are refused", test_wrong_transport_refused),
            ("mTLS with PKCS12 stores on a custom listener, principal mapping", test_mtls_pkcs12),
            ("mTLS refuses unknown CA, expired and missing client certificates", test_mtls_refusals),
            ("inline PEM, ssl.client.auth=requested", test_inline_pem_requested),
            ("the Java client and Kafka's CLI tools over mTLS", test_java_clients),
            ("ssl.enabled.protocols, ssl.cipher.suites, idle expiry over TLS", test_protocols_ciphers_idle),
            ("a three-broker cluster serves TLS clients on every broker", test_cluster_ssl_clients),
            ("a three-broker cluster replicates over mTLS", test_cluster_replicates_over_mtls),
            ("fetchers refuse a leader whose certificate names another host", test_cluster_checks_leader_host),
            ("TLS configurations that cannot serve stop startup", test_startup_refusals),
        ])
    finally:
        CERTS.close()
    sys.exit(code)
