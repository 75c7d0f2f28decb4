"""SASL (issue 15): SASL_PLAINTEXT and SASL_SSL listeners with PLAIN (users
from the JAAS line), SCRAM-SHA-256/512 (users managed with Kafka's
kafka-configs, kept as salted credentials) and OAUTHBEARER (Kafka's
unsecured validator), driven by real clients, plus the exchange on the
wire where no client will misbehave on purpose.

Each broker has a PLAINTEXT listener (the harness's, and where kafka-configs
creates SCRAM users) and a SASL one:
  - PLAIN: confluent-kafka (librdkafka) and kafka-python produce, consume in
    a group with commits and use the admin API; a wrong password and an
    unknown user get SASL_AUTHENTICATION_FAILED with Kafka's message, and
    the broker serves on;
  - on the wire: a request before authentication closes the connection, an
    unknown mechanism is answered UNSUPPORTED_SASL_MECHANISM and closed, a
    garbage token SASL_AUTHENTICATION_FAILED and closed, SaslHandshake v0
    with raw tokens (pre-KIP-152 clients) authenticates, SaslHandshake and
    SaslAuthenticate after authentication get ILLEGAL_SASL_STATE;
  - SCRAM-SHA-256 and -512: users added with kafka-configs, the clients
    authenticate with both mechanisms, a SCRAM exchange cut halfway and a
    tampered proof are refused, a deleted user is refused, users survive a
    restart;
  - SASL_SSL with SCRAM-SHA-512: confluent-kafka and Kafka's CLI tools (the
    Java client) over TLS;
  - connections.max.reauth.ms (KIP-368): the session lifetime is returned,
    an expired session is closed on its next request, a re-authentication
    on the same connection renews it, and the Java producer (which
    re-authenticates) keeps producing across several lifetimes;
  - OAUTHBEARER with librdkafka's unsecured JWT;
  - a three-broker cluster replicating over SASL_PLAINTEXT with SCRAM (its
    brokers authenticate to each other with their JAAS line's user);
  - configurations that cannot serve stop startup (Kafka's GSSAPI default,
    no JAAS line, a custom callback handler).

usage: /usr/bin/python3 security_sasl_test.py <runnel binary> [<kafka jar cache dir>]
"""

import base64
import hashlib
import hmac
import os
import re
import struct
import subprocess
import sys
import threading
import time
import uuid

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

import kafka_wire as w
import security_tls_test as tls
from cluster_harness import Cluster
from kafka_harness import kafka_classpath
from runnel_harness import Runnel, run_tests
from security_refusal_test import refused as startup_refused
from security_tls_test import BOUND, KP, confluent_round_trip, java, java_round_trip, kafka_python_round_trip
from test_certs import Certs

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required;'
OAUTH_JAAS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;'

SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE = 58, 33, 34


class SaslBroker(Runnel):
    """Runnel with a PLAINTEXT listener and a SASL one named `name`."""

    def __init__(self, name, protocol, mechanisms, jaas, overrides=None):
        props = {"listeners": "PLAINTEXT://127.0.0.1:0,%s://127.0.0.1:0" % name,
                 "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,%s:%s" % (name, protocol),
                 "sasl.enabled.mechanisms": ",".join(mechanisms)}
        for mechanism in mechanisms:
            props["listener.name.%s.%s.sasl.jaas.config" % (name.lower(), mechanism.lower())] = jaas[mechanism]
        props.update(overrides or {})
        super().__init__(overrides=props, prefix="runnel-sasl-")
        self.sasl_name = name
        self.protocol = protocol
        self.sasl_port = None

    def start(self):
        super().start()
        # The last start's line: a restart listens on new ports.
        m = re.findall(r"listening on %s://127\.0\.0\.1:(\d+) \(%s\)" % (self.sasl_name, self.protocol),
                       self.log_text())
        assert m, "no %s listener in the log" % self.protocol
        self.sasl_port = int(m[-1])
        return self

    @property
    def sasl_bootstrap(self):
        return "127.0.0.1:%d" % self.sasl_port


def plain_broker(overrides=None):
    return SaslBroker("SASL_PLAINTEXT", "SASL_PLAINTEXT", ["PLAIN"], {"PLAIN": PLAIN_JAAS}, overrides)


def scram_broker():
    return SaslBroker("SASL_PLAINTEXT", "SASL_PLAINTEXT", ["SCRAM-SHA-256", "SCRAM-SHA-512"],
                      {"SCRAM-SHA-256": SCRAM_JAAS, "SCRAM-SHA-512": SCRAM_JAAS})


def confluent_sasl(broker, mechanism, user, password, protocol="SASL_PLAINTEXT"):
    c = {"bootstrap.servers": broker.sasl_bootstrap, "broker.address.family": "v4", "security.protocol": protocol,
         "sasl.mechanisms": mechanism, "sasl.username": user, "sasl.password": password}
    if protocol == "SASL_SSL":
        c["ssl.ca.location"] = tls.CERTS.ca[0]
    return c


def kafka_python_sasl(broker, mechanism, user, password):
    return dict(KP, bootstrap_servers=broker.sasl_bootstrap, security_protocol="SASL_PLAINTEXT",
                sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password)


def assert_refused(config, message):
    """librdkafka cannot authenticate: its error callback reports the
    broker's message, and nothing is ever served."""
    errors = []
    p = Producer(dict(config, **{"retry.backoff.ms": 500, "error_cb": lambda e: errors.append(str(e))}))
    deadline = time.monotonic() + 30
    while not any(message in e for e in errors) and time.monotonic() < deadline:
        p.poll(0.2)
    assert any(message in e for e in errors), "expected %r in %s" % (message, errors)
    try:
        md = p.list_topics(timeout=2)
        raise AssertionError("a client with %s was served: %s" % (config.get("sasl.password"), md.brokers))
    except KafkaException:
        pass


def assert_still_serving(broker):
    with w.Connection(broker.port) as c:
        err, keys = w.parse_api_versions_v0(c.call(w.api_versions_v0(99), 99))
        assert err == 0 and keys, (err, keys)


def kafka_configs(broker, *args):
    return java(kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None), "kafka.admin.ConfigCommand",
                "--bootstrap-server", broker.bootstrap, *args)


def add_scram_user(broker, user, password, mechanisms=("SCRAM-SHA-256", "SCRAM-SHA-512")):
    # One mechanism per request: Kafka's controller refuses two changes of
    # one user in one AlterUserScramCredentials (DUPLICATE_RESOURCE).
    for m in mechanisms:
        kafka_configs(broker, "--alter", "--entity-type", "users", "--entity-name", user, "--add-config",
                      "%s=[password=%s]" % (m, password))


# -- the exchange on the wire ---------------------------------------------------

def handshake(version, cid, mechanism):
    return w.request(17, version, cid, w.string(mechanism))


def parse_handshake(body):
    r = w.Reader(body)
    err = r.i16()
    mechanisms = r.array(lambda r: r.string())
    return err, mechanisms


def authenticate(cid, token, version=1):
    return w.request(36, version, cid, w.bytes_(token))


def parse_authenticate(body, version=1):
    r = w.Reader(body)
    err = r.i16()
    message = r.string()
    (n,) = struct.unpack(">i", r.take(4))
    token = r.take(n) if n > 0 else b""
    lifetime = r.i64() if version >= 1 else 0
    return err, message, token, lifetime


def plain_token(user, password):
    return b"\0" + user.encode() + b"\0" + password.encode()


def sasl_connect(port, mechanism="PLAIN"):
    c = w.Connection(port)
    err, mechanisms = parse_handshake(c.call(handshake(1, 1, mechanism), 1))
    assert err == 0, (err, mechanisms)
    return c


def metadata_ok(c, cid):
    body = c.call(w.metadata_v1(cid), cid)
    assert len(body) > 4, body


def test_plain_clients():
    with plain_broker() as b:
        confluent_round_trip(confluent_sasl(b, "PLAIN", "alice", "alice-secret"), records=500)
        kafka_python_round_trip(kafka_python_sasl(b, "PLAIN", "alice", "alice-secret"))
        assert_refused(confluent_sasl(b, "PLAIN", "alice", "wrong"),
                       "Authentication failed: Invalid username or password")
        assert_refused(confluent_sasl(b, "PLAIN", "mallory", "alice-secret"),
                       "Authentication failed: Invalid username or password")
        assert_still_serving(b)
        assert re.search(r"failed authentication with 127\.0\.0\.1:\d+ on listener SASL_PLAINTEXT \(SASL PLAIN\)",
                         b.log_text()), "no failed authentication in the broker's log"


def test_plain_on_the_wire():
    with plain_broker() as b:
        # Nothing but ApiVersions and the SASL exchange before authentication.
        with w.Connection(b.sasl_port) as c:
            c.send(w.metadata_v1(1))
            c.expect_closed("Metadata before authentication")
        with w.Connection(b.sasl_port) as c:
            err, keys = w.parse_api_versions_v0(c.call(w.api_versions_v0(1), 1))
            assert err == 0 and {17, 36} <= {k[0] for k in keys}, keys
            err, mechanisms = parse_handshake(c.call(handshake(1, 2, "GSSAPI"), 2))
            assert err == UNSUPPORTED_SASL_MECHANISM and mechanisms == ["PLAIN"], (err, mechanisms)
            c.expect_closed("after an unsupported mechanism")
        for garbage in (b"", b"\xff\xfe\x00", b"\0\0\0\0\0", os.urandom(300), b"alice"):
            with sasl_connect(b.sasl_port) as c:
                err, message, _, _ = parse_authenticate(c.call(authenticate(2, garbage), 2))
                assert err == SASL_AUTHENTICATION_FAILED and message, (garbage, err, message)
                c.expect_closed("after a garbage token")
        # A complete exchange, then the SASL APIs are refused as Kafka refuses them.
        with sasl_connect(b.sasl_port) as c:
            err, message, token, lifetime = parse_authenticate(
                c.call(authenticate(2, plain_token("alice", "alice-secret")), 2))
            assert (err, token, lifetime) == (0, b"", 0), (err, message, token, lifetime)
            metadata_ok(c, 3)
            err, _ = parse_handshake(c.call(handshake(1, 4, "PLAIN"), 4))
            assert err == ILLEGAL_SASL_STATE, err
            err, message, _, _ = parse_authenticate(c.call(authenticate(5, b"x"), 5))
            assert err == ILLEGAL_SASL_STATE, err
            assert message == "SaslAuthenticate request received after successful authentication", message
            metadata_ok(c, 6)
        # SaslHandshake v0: the tokens travel as raw size-prefixed frames.
        with w.Connection(b.sasl_port) as c:
            err, _ = parse_handshake(c.call(handshake(0, 1, "PLAIN"), 1))
            assert err == 0, err
            token = plain_token("alice", "alice-secret")
            c.send(struct.pack(">i", len(token)) + token)
            (size,) = struct.unpack(">i", c.recv_exact(4))
            assert size == 0, size
            metadata_ok(c, 2)
        with w.Connection(b.sasl_port) as c:
            parse_handshake(c.call(handshake(0, 1, "PLAIN"), 1))
            token = plain_token("alice", "nope")
            c.send(struct.pack(">i", len(token)) + token)
            c.expect_closed("a wrong password with raw tokens")
        # A frame larger than sasl.server.max.receive.size before authentication.
        with w.Connection(b.sasl_port) as c:
            c.send(struct.pack(">i", 600000) + b"\0" * 16)
            c.expect_closed("an oversized frame before authentication")
        assert_still_serving(b)


# -- SCRAM ------------------------------------------------------------------------

def _hash(mechanism):
    return hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha512


class ScramClient:
    """RFC 5802's client side, for exchanges no real client would send."""

    def __init__(self, mechanism, user, password):
        self.mechanism, self.user, self.password = mechanism, user, password
        self.nonce = base64.b64encode(os.urandom(18)).decode()
        self.first_bare = "n=%s,r=%s" % (user, self.nonce)

    def first(self):
        return ("n,," + self.first_bare).encode()

    def final(self, server_first, tamper=False):
        h = _hash(self.mechanism)
        fields = dict(kv.split("=", 1) for kv in server_first.decode().split(","))
        assert fields["r"].startswith(self.nonce), fields
        salted = hashlib.pbkdf2_hmac(h().name, self.password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
        client_key = hmac.new(salted, b"Client Key", h).digest()
        without_proof = "c=biws,r=" + fields["r"]
        auth_message = ",".join([self.first_bare, server_first.decode(), without_proof]).encode()
        signature = hmac.new(h(client_key).digest(), auth_message, h).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        if tamper:
            proof = bytes([proof[0] ^ 1]) + proof[1:]
        server_key = hmac.new(salted, b"Server Key", h).digest()
        self.expected_server_signature = base64.b64encode(hmac.new(server_key, auth_message, h).digest()).decode()
        return (without_proof + ",p=" + base64.b64encode(proof).decode()).encode()


def scram_exchange(port, mechanism, user, password, tamper=False):
    c = sasl_connect(port, mechanism)
    s = ScramClient(mechanism, user, password)
    err, message, server_first, _ = parse_authenticate(c.call(authenticate(2, s.first()), 2))
    assert err == 0, (err, message)
    err, message, server_final, _ = parse_authenticate(c.call(authenticate(3, s.final(server_first, tamper)), 3))
    return c, s, err, message, server_final


def test_scram_users():
    with scram_broker() as b:
        add_scram_user(b, "alice", "alice-secret")
        add_scram_user(b, "bob", "bob-secret", ("SCRAM-SHA-512",))
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            confluent_round_trip(confluent_sasl(b, mechanism, "alice", "alice-secret"), records=300)
        kafka_python_round_trip(kafka_python_sasl(b, "SCRAM-SHA-256", "alice", "alice-secret"), records=100)
        assert_refused(confluent_sasl(b, "SCRAM-SHA-256", "alice", "wrong"), "Authentication failed")
        assert_refused(confluent_sasl(b, "SCRAM-SHA-256", "bob", "bob-secret"), "Authentication failed")
        assert_refused(confluent_sasl(b, "SCRAM-SHA-512", "nobody", "x"), "Authentication failed")
        # The server signature proves the broker holds alice's ServerKey.
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            c, s, err, message, server_final = scram_exchange(b.sasl_port, mechanism, "alice", "alice-secret")
            with c:
                assert err == 0, (err, message)
                assert server_final.decode() == "v=" + s.expected_server_signature, server_final
                metadata_ok(c, 4)
        c, s, err, message, _ = scram_exchange(b.sasl_port, "SCRAM-SHA-256", "alice", "alice-secret", tamper=True)
        with c:
            assert err == SASL_AUTHENTICATION_FAILED and message, (err, message)
            c.expect_closed("after a tampered proof")
        # Cut halfway: the client-first message, then the client goes away.
        for _ in range(5):
            c = sasl_connect(b.sasl_port, "SCRAM-SHA-512")
            c.send(authenticate(2, ScramClient("SCRAM-SHA-512", "alice", "x").first()))
            c.close()
        assert_still_serving(b)
        # Deleted: refused; the rest survives a restart.
        kafka_configs(b, "--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config",
                      "SCRAM-SHA-512")
        assert_refused(confluent_sasl(b, "SCRAM-SHA-512", "alice", "alice-secret"), "Authentication failed")
        b.restart()
        c, s, err, message, _ = scram_exchange(b.sasl_port, "SCRAM-SHA-256", "alice", "alice-secret")
        with c:
            assert err == 0, (err, message)
        confluent_round_trip(confluent_sasl(b, "SCRAM-SHA-512", "bob", "bob-secret"), records=50)


def test_sasl_ssl_java():
    certs = tls.CERTS
    jaas = {"SCRAM-SHA-512": SCRAM_JAAS}
    overrides = {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": certs.server_p12,
                 "ssl.keystore.password": "storepass"}
    with SaslBroker("SASL_SSL", "SASL_SSL", ["SCRAM-SHA-512"], jaas, overrides) as b:
        add_scram_user(b, "carol", "carol-secret", ("SCRAM-SHA-512",))
        confluent_round_trip(confluent_sasl(b, "SCRAM-SHA-512", "carol", "carol-secret", "SASL_SSL"), records=300)
        config = certs.path("java-sasl.properties")
        with open(config, "w") as f:
            f.write("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                    "username=\"carol\" password=\"carol-secret\";\n"
                    "ssl.truststore.type=PEM\nssl.truststore.location=%s\n"
                    "default.api.timeout.ms=90000\nrequest.timeout.ms=30000\n" % certs.ca[0])
        classpath = kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None)
        java_round_trip(classpath, b.sasl_bootstrap, config, "java-sasl")


def test_reauthentication():
    lifetime = 3000
    with plain_broker({"connections.max.reauth.ms": str(lifetime)}) as b:
        with sasl_connect(b.sasl_port) as c:
            err, _, _, got = parse_authenticate(c.call(authenticate(2, plain_token("alice", "alice-secret")), 2))
            assert (err, got) == (0, lifetime), (err, got)
            metadata_ok(c, 3)
            time.sleep(lifetime / 1000 + 1)
            c.send(w.metadata_v1(4))
            c.expect_closed("a request after the session expired")
        with sasl_connect(b.sasl_port) as c:
            parse_authenticate(c.call(authenticate(2, plain_token("alice", "alice-secret")), 2))
            time.sleep(1.5)
            # Re-authentication on the same connection renews the session...
            err, _ = parse_handshake(c.call(handshake(1, 3, "PLAIN"), 3))
            assert err == 0, err
            err, _, _, got = parse_authenticate(c.call(authenticate(4, plain_token("alice", "alice-secret")), 4))
            assert (err, got) == (0, lifetime), (err, got)
            time.sleep(2.0)  # past the first session's end, inside the second's
            metadata_ok(c, 5)
        with sasl_connect(b.sasl_port) as c:
            parse_authenticate(c.call(authenticate(2, plain_token("alice", "alice-secret")), 2))
            time.sleep(1.5)
            # ...but not as someone else.
            parse_handshake(c.call(handshake(1, 3, "PLAIN"), 3))
            err, message, _, _ = parse_authenticate(c.call(authenticate(4, plain_token("admin", "admin-secret")), 4))
            assert err == SASL_AUTHENTICATION_FAILED and "Cannot change principals" in message, (err, message)
            c.expect_closed("a re-authentication as another principal")
        # The Java producer re-authenticates on its own: records sent over
        # several lifetimes all arrive.
        config = os.path.join(b.log_dir, "..", "java-reauth.properties")
        with open(config, "w") as f:
            f.write("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                    "username=\"alice\" password=\"alice-secret\";\n")
        classpath = kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None)
        topic = "reauth-" + uuid.uuid4().hex[:8]
        proc = subprocess.Popen(["java", "-Dlog4j2.level=ERROR", "-cp", classpath,
                                 "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", b.sasl_bootstrap,
                                 "--topic", topic, "--producer.config", config, "--producer-property", "acks=all",
                                 "--producer-property", "linger.ms=0"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            for i in range(10):
                proc.stdin.write("reauth-%d\n" % i)
                proc.stdin.flush()
                time.sleep(1.0)
            proc.stdin.close()
            proc.wait(120)
            out = proc.stdout.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert proc.returncode == 0, out[-3000:]
        admin = AdminClient(confluent_sasl(b, "PLAIN", "alice", "alice-secret"))
        md = admin.list_topics(topic, timeout=BOUND)
        assert topic in md.topics, md.topics
        with w.Connection(b.port) as c:
            r = w.Reader(c.call(w.list_offsets_v1(7, topic, [0]), 7))
            r.i32()  # topics
            r.string()
            r.i32()  # partitions
            r.i32()
            err = r.i16()
            r.i64()
            end = r.i64()
            assert (err, end) == (0, 10), (err, end, out[-2000:])


def test_oauthbearer_unsecured():
    with SaslBroker("SASL_PLAINTEXT", "SASL_PLAINTEXT", ["OAUTHBEARER"], {"OAUTHBEARER": OAUTH_JAAS}) as b:
        config = {"bootstrap.servers": b.sasl_bootstrap, "broker.address.family": "v4",
                  "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "OAUTHBEARER",
                  "enable.sasl.oauthbearer.unsecure.jwt": True, "sasl.oauthbearer.config": "principal=alice"}
        confluent_round_trip(config, records=200)


def cluster_replicates_over_sasl(mechanism):
    """Three brokers whose followers fetch over SASL_PLAINTEXT with
    `mechanism` as the JAAS line's user "broker" (for SCRAM, created through
    a PLAINTEXT listener first); a client on SASL with PLAIN."""
    jaas_scram = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
                  'username="broker" password="broker-secret";')
    # The PLAIN line is both who this broker is to the others and the users it accepts.
    jaas_plain = PLAIN_JAAS.replace('username="admin" password="admin-secret"',
                                    'username="broker" password="broker-secret" user_broker="broker-secret"')
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                 "inter.broker.listener.name": "SASL_PLAINTEXT",
                 "sasl.enabled.mechanisms": "SCRAM-SHA-256,PLAIN",
                 "sasl.mechanism.inter.broker.protocol": mechanism,
                 "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": jaas_scram,
                 "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas_plain}
    with Cluster(3, overrides=overrides) as c:
        first = c.brokers[1]
        if mechanism != "PLAIN":
            add_scram_user(first, "broker", "broker-secret", (mechanism,))
        ports = {}
        for i, b in c.brokers.items():
            m = re.search(r"listening on SASL_PLAINTEXT://127\.0\.0\.1:(\d+) \(SASL_PLAINTEXT\)", b.log_text())
            assert m, "node %d: no SASL listener" % i
            ports[i] = int(m.group(1))
        config = {"bootstrap.servers": "127.0.0.1:%d" % ports[2], "broker.address.family": "v4",
                  "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN", "sasl.username": "alice",
                  "sasl.password": "alice-secret"}
        admin = AdminClient(config)
        topic = "cluster-sasl"
        admin.create_topics([NewTopic(topic, 3, 3)], operation_timeout=30, request_timeout=BOUND)[topic].result(BOUND)
        errors = []
        p = Producer(dict(config, **{"acks": "all"}))
        for i in range(300):
            p.produce(topic, tls.value(i), str(i).encode(), partition=i % 3,
                      on_delivery=lambda e, m: e and errors.append(e))
        assert p.flush(BOUND) == 0 and not errors, errors[:3]
        # Every follower is in the ISR: each fetched over SASL.
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            md = admin.list_topics(topic, timeout=BOUND)
            if all(len(pm.isrs) == 3 for pm in md.topics[topic].partitions.values()):
                break
            time.sleep(0.5)
        else:
            raise AssertionError("ISR not full: %s" % {p: pm.isrs for p, pm in md.topics[topic].partitions.items()})
        for b in c.brokers.values():
            assert ("replica fetchers authenticate on listener SASL_PLAINTEXT with SASL %s as broker" % mechanism) in \
                b.log_text()


def test_cluster_replicates_over_sasl():
    cluster_replicates_over_sasl("SCRAM-SHA-256")


def test_cluster_replicates_over_plain():
    # PLAIN answers its one token with nothing to verify: the fetchers took
    # that empty answer for a challenge that failed, and never authenticated.
    cluster_replicates_over_sasl("PLAIN")


def test_startup_refusals():
    sasl = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"}
    # Kafka's default sasl.enabled.mechanisms is GSSAPI (Kerberos).
    startup_refused(sasl, "GSSAPI")
    startup_refused(dict(sasl, **{"sasl.enabled.mechanisms": "PLAIN"}),
                    "listener.name.sasl_plaintext.plain.sasl.jaas.config")
    startup_refused(dict(sasl, **{"sasl.enabled.mechanisms": "PLAIN",
                                  "listener.name.sasl_plaintext.plain.sasl.jaas.config": "PlainLoginModule"}),
                    "listener.name.sasl_plaintext.plain.sasl.jaas.config")
    startup_refused(dict(sasl, **{"sasl.enabled.mechanisms": "PLAIN",
                                  "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
                                  "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class": "x.Y"}),
                    "sasl.server.callback.handler.class")


if __name__ == "__main__":
    tls.CERTS = Certs()
    try:
        code = run_tests([
            ("PLAIN: confluent-kafka and kafka-python, wrong passwords refused", test_plain_clients),
            ("PLAIN on the wire: gating, mechanisms, garbage, v0 raw tokens", test_plain_on_the_wire),
            ("SCRAM-SHA-256/512 users from kafka-configs", test_scram_users),
            ("SASL_SSL with SCRAM-SHA-512: confluent-kafka and the Java client", test_sasl_ssl_java),
            ("connections.max.reauth.ms: lifetime, expiry, re-authentication", test_reauthentication),
            ("OAUTHBEARER with an unsecured JWT", test_oauthbearer_unsecured),
            ("a three-broker cluster replicates over SASL/SCRAM", test_cluster_replicates_over_sasl),
            ("a three-broker cluster replicates over SASL/PLAIN", test_cluster_replicates_over_plain),
            ("SASL configurations that cannot serve stop startup", test_startup_refusals),
        ])
    finally:
        tls.CERTS.close()
    sys.exit(code)
