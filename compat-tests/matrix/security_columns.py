"""The matrix's security columns (run_matrix.py --security): one broker,
Runnel or Kafka, configured the same way with a listener per column, its
SCRAM users, and the file that tells a driver how to reach each column.

Listeners (listener.security.protocol.map below, the same on both brokers):
  - PLAINTEXT: the harness's own (readiness, creating the SCRAM users) and
    Kafka's inter-broker listener; no column uses it;
  - SSL: TLS, ssl.client.auth=none;
  - MTLS, mapped to SSL: TLS with ssl.client.auth=required (its one
    listener.name.mtls.* key);
  - SASL_PLAINTEXT and SASL_SSL: sasl.enabled.mechanisms PLAIN,
    SCRAM-SHA-256,SCRAM-SHA-512, a JAAS line per listener and mechanism;
    PLAIN's user is the JAAS line's, the SCRAM user is created with
    AlterUserScramCredentials (both mechanisms) before the driver starts.
The server's key store is PKCS12 and its trust store the CA's PEM file
(test_certs.Certs, made once per run with the openssl CLI).

The file (a driver's --security FILE) is a JSON object, scenario id ->
what a client needs for that column; see COLUMNS and column().
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import scram_admin  # noqa: E402

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
PLAIN_USER, PLAIN_PASSWORD = "alice", "alice-secret"
SCRAM_USER, SCRAM_PASSWORD = "bob", "bob-secret"
JAAS = {
    "PLAIN": 'org.apache.kafka.common.security.plain.PlainLoginModule required user_%s="%s";'
             % (PLAIN_USER, PLAIN_PASSWORD),
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
}
LISTENERS = {"SSL": "SSL", "MTLS": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL"}

# Scenario id -> (listener, SASL mechanism or None), in column order.
COLUMNS = {
    "security_ssl": ("SSL", None),
    "security_mtls": ("MTLS", None),
    "security_sasl_plain": ("SASL_PLAINTEXT", "PLAIN"),
    "security_scram_sha256": ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
    "security_scram_sha512": ("SASL_PLAINTEXT", "SCRAM-SHA-512"),
    "security_sasl_ssl": ("SASL_SSL", "SCRAM-SHA-512"),
}


def broker_settings(certs):
    """Every security key, the same for Runnel and Kafka (beyond `listeners`,
    which the harnesses write: Runnel's on port 0, Kafka's on ports picked
    free, plus its CONTROLLER listener)."""
    s = {
        "listener.security.protocol.map": ",".join(
            ["CONTROLLER:PLAINTEXT", "PLAINTEXT:PLAINTEXT"] + ["%s:%s" % kv for kv in LISTENERS.items()]),
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": certs.server_p12,
        "ssl.keystore.password": "storepass",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": certs.ca[0],
        "ssl.client.auth": "none",
        "listener.name.mtls.ssl.client.auth": "required",
        "sasl.enabled.mechanisms": ",".join(MECHANISMS),
    }
    for listener in LISTENERS:
        if listener.startswith("SASL_"):
            for mechanism in MECHANISMS:
                s["listener.name.%s.%s.sasl.jaas.config" % (listener.lower(), mechanism.lower())] = JAAS[mechanism]
    return s


def runnel_listeners():
    return ",".join("%s://127.0.0.1:0" % n for n in ["PLAINTEXT"] + list(LISTENERS))


def column(certs, port, listener, mechanism):
    """What a client needs to reach one column: JSON keys
      bootstrap            "127.0.0.1:PORT" of the column's listener
      listener             the broker's listener name (for messages)
      security_protocol    SSL, SASL_PLAINTEXT or SASL_SSL (Kafka's security.protocol)
      ca_pem               (TLS) the CA certificate, PEM; the broker's certificate
                           names localhost and 127.0.0.1, so host name checks pass
      client_cert_pem, client_key_pem   (mTLS) the client certificate and its
                           unencrypted key, PEM
      client_keystore_pem  (mTLS) key then certificate in one PEM file (Java's
                           ssl.keystore.type=PEM)
      client_p12, client_p12_password   (mTLS) the same as PKCS12
      sasl_mechanism, sasl_username, sasl_password   (SASL)"""
    protocol = LISTENERS[listener]
    c = {"bootstrap": "127.0.0.1:%d" % port, "listener": listener, "security_protocol": protocol}
    if protocol.endswith("SSL"):
        c["ca_pem"] = certs.ca[0]
    if listener == "MTLS":
        c.update(client_cert_pem=certs.client[0], client_key_pem=certs.client[1],
                 client_keystore_pem=certs.client_keystore_pem, client_p12=certs.client_p12,
                 client_p12_password="clientpass")
    if mechanism:
        user, password = (PLAIN_USER, PLAIN_PASSWORD) if mechanism == "PLAIN" else (SCRAM_USER, SCRAM_PASSWORD)
        c.update(sasl_mechanism=mechanism, sasl_username=user, sasl_password=password)
    return c


def add_scram_users(plaintext_port, timeout=60.0):
    """The SCRAM user, both mechanisms, through AlterUserScramCredentials on
    the PLAINTEXT listener; returns once the broker describes both."""
    for mechanism in MECHANISMS[1:]:
        code, message = scram_admin.upsert_raw(plaintext_port, SCRAM_USER, mechanism, SCRAM_PASSWORD)
        assert code == 0, "AlterUserScramCredentials %s %s: error %d %s" % (SCRAM_USER, mechanism, code, message)
    deadline = time.monotonic() + timeout
    while True:
        error, users = scram_admin.describe_raw(plaintext_port, [SCRAM_USER])
        got = users.get(SCRAM_USER, (None, None, {}))
        if error == 0 and got[0] == 0 and set(got[2]) == set(MECHANISMS[1:]):
            return
        if time.monotonic() > deadline:
            raise AssertionError("SCRAM user %s not described with both mechanisms after %.0f s: %s"
                                 % (SCRAM_USER, timeout, users))
        time.sleep(0.2)


def write_file(path, certs, ports):
    """The driver's --security FILE for a broker listening on `ports` ({listener: port})."""
    doc = {sid: column(certs, ports[listener], listener, mechanism) for sid, (listener, mechanism) in COLUMNS.items()}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return path
