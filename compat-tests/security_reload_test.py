"""Key stores reloaded without a restart (issue 15): Kafka's dynamic
listener.name.<listener>.ssl.keystore.* broker configs (KIP-226), set with
Kafka's own kafka-configs and with AlterConfigs from an admin client, on a
Runnel with a PLAINTEXT and an SSL listener. Certificates are made by the
test with the openssl CLI: a CA, and certificates for localhost (DNS and IP
alternative names) renewed several times, one with another subject DN, one
that drops an alternative name.

  1. kafka-configs --alter --add-config listener.name.ssl.ssl.keystore.location=<renewed>
     on BROKER "<node id>": the next TLS connection gets the renewed
     certificate, one opened before goes on with the old, clients produce
     and consume over it; kafka-configs --describe lists the key.
  2. The same path with the file rewritten reloads it; a store with another
     DN or fewer alternative names, or that cannot be read, is refused with
     Kafka's INVALID_REQUEST "Invalid dynamic configuration" and changes
     nothing; ValidateOnly changes nothing; the key without the listener
     prefix, or on the cluster default, is refused with Kafka's messages;
     the update survives a restart.

usage: /usr/bin/python3 security_reload_test.py <runnel binary> [<kafka jar cache dir>]
"""

import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource

import kafka_wire as w
from kafka_harness import kafka_classpath
from runnel_harness import Runnel, run_tests
from security_tls_test import BOUND, Certs, confluent_round_trip, java

LOCALHOST = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"
KEY = "listener.name.ssl.ssl.keystore.location"
INVALID_REQUEST = 42


class Stores:
    """PEM key stores (key, then certificate) signed by one test CA."""

    def __init__(self):
        self.certs = Certs()
        self.ca = self.certs.ca[0]
        self.serials = {}

    def store(self, name, subject="/O=Runnel/CN=localhost", extensions=LOCALHOST):
        cert, key = self.certs._leaf(name, subject, self.certs.ca, 2, extensions)
        path = self.certs.path(name + "-keystore.pem")
        self.certs._concat(path, key, cert)
        self.serials[path] = serial_of(cert)
        return path

    def close(self):
        self.certs.close()


def serial_of(cert_path):
    return ssl._ssl._test_decode_cert(cert_path)["serialNumber"]


class SslBroker(Runnel):
    def __init__(self, keystore):
        super().__init__(overrides={"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                                    "ssl.keystore.type": "PEM", "ssl.keystore.location": keystore},
                         prefix="runnel-tls-reload-")
        self.tls_port = None

    def start(self):
        super().start()
        # The last start's listener: a restart binds another ephemeral port.
        ports = re.findall(r"listening on SSL://127\.0\.0\.1:(\d+) \(SSL\)", self.log_text())
        assert ports, "no SSL listener in the log"
        self.tls_port = int(ports[-1])
        return self


def tls_connect(broker, ca):
    context = ssl.create_default_context(cafile=ca)
    raw = socket.create_connection(("127.0.0.1", broker.tls_port), timeout=BOUND)
    return context.wrap_socket(raw, server_hostname="localhost")


def served_serial(broker, ca):
    with tls_connect(broker, ca) as s:
        return s.getpeercert()["serialNumber"]


def api_versions_over(sock, correlation_id):
    sock.sendall(w.api_versions_v0(correlation_id))
    size = int.from_bytes(recv_exact(sock, 4), "big")
    frame = recv_exact(sock, size)
    assert int.from_bytes(frame[:4], "big") == correlation_id, frame[:4]
    err, keys = w.parse_api_versions_v0(frame[4:])
    assert err == 0 and keys, (err, keys)


def recv_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        assert chunk, "connection closed"
        out += chunk
    return out


def kafka_configs(broker, *args):
    return java(kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None), "kafka.admin.ConfigCommand",
                "--bootstrap-server", broker.bootstrap, *args)


def kafka_configs_refused(broker, *args):
    """kafka-configs that must fail: its output."""
    cmd = ["java", "-Dlog4j2.level=ERROR", "-cp", kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None),
           "kafka.admin.ConfigCommand", "--bootstrap-server", broker.bootstrap] + list(args)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0, "kafka-configs %s succeeded:\n%s" % (" ".join(args), out.stdout)
    return out.stdout + out.stderr


def alter(broker, resource_name, configs, validate_only=False):
    """Legacy AlterConfigs of BROKER `resource_name`: None, or (code, message)."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "broker.address.family": "v4"})
    resource = ConfigResource(ConfigResource.Type.BROKER, resource_name, set_config=configs)
    try:
        admin.alter_configs([resource], validate_only=validate_only, request_timeout=BOUND)[resource].result(BOUND)
        return None
    except KafkaException as e:
        return e.args[0].code(), e.args[0].str()


def ssl_config(broker, ca):
    return {"bootstrap.servers": "127.0.0.1:%d" % broker.tls_port, "broker.address.family": "v4",
            "security.protocol": "SSL", "ssl.ca.location": ca, "ssl.endpoint.identification.algorithm": "https"}


def test_kafka_configs_renewal(stores):
    first, renewed = stores.store("first"), stores.store("renewed")
    with SslBroker(first) as b:
        assert served_serial(b, stores.ca) == stores.serials[first]
        before = tls_connect(b, stores.ca)  # open across the update
        try:
            api_versions_over(before, 1)
            out = kafka_configs(b, "--alter", "--entity-type", "brokers", "--entity-name", "1",
                                "--add-config", "%s=%s" % (KEY, renewed))
            assert "Completed updating config for broker 1." in out, out
            assert served_serial(b, stores.ca) == stores.serials[renewed]
            api_versions_over(before, 2)
            assert before.getpeercert()["serialNumber"] == stores.serials[first]
        finally:
            before.close()
        confluent_round_trip(ssl_config(b, stores.ca), records=50)
        out = kafka_configs(b, "--describe", "--entity-type", "brokers", "--entity-name", "1")
        assert "%s=%s" % (KEY, renewed) in out, out
        assert "new TLS key and trust stores" in b.log_text()


def test_reload_and_refusals(stores):
    first = stores.store("start")
    live = stores.certs.path("live-keystore.pem")
    shutil.copy(first, live)
    with SslBroker(first) as b:
        assert alter(b, "1", {KEY: live}) is None
        assert served_serial(b, stores.ca) == stores.serials[first]

        # Rewritten in place (a renewal tool does that): the same path again reloads it.
        rewritten = stores.store("rewritten")
        shutil.copy(rewritten, live)
        later = time.time() + 5
        os.utime(live, (later, later))
        assert alter(b, "1", {KEY: live}) is None
        assert served_serial(b, stores.ca) == stores.serials[rewritten]

        refused = [
            (stores.store("other-dn", subject="/O=Runnel/CN=someone-else"), "Keystore DistinguishedName does not match"),
            (stores.store("fewer-sans", extensions="subjectAltName=DNS:localhost\n"),
             "Keystore SubjectAltNames do not match"),
            (stores.certs.path("missing.pem"), "missing.pem"),
        ]
        for path, reason in refused:
            got = alter(b, "1", {KEY: path})
            assert got is not None and got[0] == INVALID_REQUEST and "Invalid dynamic configuration" in got[1], got
            assert reason in b.log_text(), "broker log lacks %r" % reason
            assert served_serial(b, stores.ca) == stores.serials[rewritten]

        compatible = stores.store("compatible")
        assert alter(b, "1", {KEY: compatible}, validate_only=True) is None
        assert served_serial(b, stores.ca) == stores.serials[rewritten]

        got = alter(b, "1", {"ssl.keystore.location": compatible})
        assert got and got[0] == INVALID_REQUEST and got[1] == (
            "These security configs can be dynamically updated only per-listener using the listener prefix: "
            "Set(ssl.keystore.location)"), got
        # confluent-kafka cannot name BROKER ""; kafka-configs --entity-default does.
        out = kafka_configs_refused(b, "--alter", "--entity-type", "brokers", "--entity-default",
                                    "--add-config", "%s=%s" % (KEY, compatible))
        assert ("Cannot update these configs at default cluster level, broker id must be specified: Set(%s)" % KEY
                in out), out

        # Stored as a dynamic broker config: the listener starts with it again.
        b.restart()
        assert served_serial(b, stores.ca) == stores.serials[rewritten]
        confluent_round_trip(ssl_config(b, stores.ca), records=20)


if __name__ == "__main__":
    STORES = Stores()
    try:
        code = run_tests([
            ("kafka-configs renews the SSL listener's key store without a restart",
             lambda: test_kafka_configs_renewal(STORES)),
            ("a rewritten store reloads; incompatible stores and misplaced keys are refused",
             lambda: test_reload_and_refusals(STORES)),
        ])
    finally:
        STORES.close()
    sys.exit(code)
