#!/usr/bin/python3
"""The `runnel` CLI on secured listeners (label "security", issue 17):
-X security.protocol / sasl.* / ssl.* as kcat takes them, `runnel user` and
`runnel acl`, with an independent other side for each.

One broker with StandardAuthorizer (allow.everyone.if.no.acl.found=false)
and three listeners: PLAINTEXT (User:ANONYMOUS, a super user, for the
independent checks), SASL_SSL with PLAIN (admin, a super user) and
SCRAM-SHA-256/512, and SSL with ssl.client.auth=required.

  - `runnel user create carol` as admin over SASL_SSL/PLAIN sets both SCRAM
    credentials; Kafka's kafka-configs --describe lists them, librdkafka
    authenticates as carol with that password, `runnel user list` shows them;
  - carol (the CLI over SASL_SSL/SCRAM-SHA-512) is refused CreateTopics
    and Produce until `runnel acl create` gives her WRITE; kafka-python's
    DescribeAcls sees the bindings `runnel acl list` prints; a PREFIXED READ
    lets her consume what she produced; `runnel acl delete` removes them;
  - the client certificate (ssl.certificate.location / ssl.key.location) is
    the principal on the mTLS listener: it sees the topic once an ACL names
    its DN;
  - `runnel user delete carol`: her next connection fails authentication;
  - error paths: a wrong password (exit 1, SASL_AUTHENTICATION_FAILED), an
    untrusted server certificate and a missing client certificate (exit 3),
    incomplete -X settings (exit 2).

usage: /usr/bin/python3 cli_security_test.py <runnel binary> [<kafka jar cache dir>]
"""

import json
import re
import subprocess
import sys

from confluent_kafka import Consumer, Producer

import security_tls_test as tls
from acl_admin import AclAdmin
from runnel_harness import run_tests, runnel_binary
from security_sasl_test import PLAIN_JAAS, SCRAM_JAAS, SaslBroker, kafka_configs
from test_certs import Certs

BOUND = 60.0  # seconds: CI machines are loaded
TOPIC = "cli-sec"
CLIENT_DN = "User:CN=client,OU=eng,O=Runnel,C=US"
RUNNEL = None
BROKER = None
CERTS = None
MTLS_PORT = None


def run(args, expect=0, input=None):
    p = subprocess.run([RUNNEL] + args, input=input, capture_output=True, timeout=BOUND)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    assert p.returncode == expect, "runnel %s exited %d (expected %d)\nstdout: %s\nstderr: %s" % (
        " ".join(args), p.returncode, expect, out, err)
    return out, err


def as_user(mechanism, user, password):
    """The -b and -X words for the SASL_SSL listener as `user`."""
    return ["-b", BROKER.sasl_bootstrap, "-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + CERTS.ca[0],
            "-X", "sasl.mechanism=" + mechanism, "-X", "sasl.username=" + user, "-X", "sasl.password=" + password]


ADMIN = ("PLAIN", "admin", "admin-secret")
CAROL = ("SCRAM-SHA-512", "carol", "carol-secret")


def cli(args, who, expect=0, input=None):
    return run(args + as_user(*who), expect=expect, input=input)


def mtls(with_certificate=True):
    words = ["-b", "127.0.0.1:%d" % MTLS_PORT, "-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + CERTS.ca[0]]
    if with_certificate:
        words += ["-X", "ssl.certificate.location=" + CERTS.client[0], "-X", "ssl.key.location=" + CERTS.client[1]]
    return words


def users_and_credentials():
    out, _ = cli(["user", "create", "carol", "--password", "carol-secret", "-m", "SCRAM-SHA-256",
                  "-m", "SCRAM-SHA-512"], ADMIN)
    assert "SCRAM-SHA-256 credential set" in out and "SCRAM-SHA-512 credential set" in out, out
    listed = json.loads(cli(["user", "list", "-o", "json"], ADMIN)[0])
    assert listed == [{"user": "carol", "credentials": [{"mechanism": "SCRAM-SHA-256", "iterations": 4096},
                                                        {"mechanism": "SCRAM-SHA-512", "iterations": 4096}]}], listed
    # Kafka's own tool reads what the CLI stored.
    described = kafka_configs(BROKER, "--describe", "--entity-type", "users", "--entity-name", "carol")
    assert "SCRAM-SHA-256=iterations=4096" in described and "SCRAM-SHA-512=iterations=4096" in described, described
    # The salted password the CLI computed is the one librdkafka proves it knows.
    p = Producer({"bootstrap.servers": BROKER.sasl_bootstrap, "broker.address.family": "v4",
                  "security.protocol": "SASL_SSL", "ssl.ca.location": CERTS.ca[0], "sasl.mechanisms": "SCRAM-SHA-256",
                  "sasl.username": "carol", "sasl.password": "carol-secret"})
    md = p.list_topics(timeout=BOUND)
    assert md.orig_broker_id == 1, md.orig_broker_id
    print("     kafka-configs: %s" % described.strip().splitlines()[-1], flush=True)


def acls_gate_carol():
    _, err = cli(["topic", "create", TOPIC, "-p", "1", "-r", "1"], CAROL, expect=1)
    assert "TOPIC_AUTHORIZATION_FAILED" in err, err
    cli(["topic", "create", TOPIC, "-p", "1", "-r", "1"], ADMIN)
    # The CLI's producer is idempotent: with WRITE on no topic, Kafka
    # refuses its InitProducerId (KIP-679) before any Produce.
    _, err = cli(["produce", TOPIC], CAROL, expect=1, input=b"a\nb\nc\n")
    assert "CLUSTER_AUTHORIZATION_FAILED" in err and "InitProducerId" in err, err
    _, err = cli(["produce", TOPIC, "-X", "enable.idempotence=false"], CAROL, expect=1, input=b"a\n")
    assert "TOPIC_AUTHORIZATION_FAILED" in err, err

    out, _ = cli(["acl", "create", "--principal", "User:carol", "--operation", "write", "--operation", "Describe",
                  "--topic", TOPIC], ADMIN)
    assert out.count("created ALLOW User:carol") == 2, out
    rows = json.loads(cli(["acl", "list", "--principal", "User:carol", "-o", "json"], ADMIN)[0])
    ours = sorted((r["resource_type"], r["resource_name"], r["pattern_type"], r["principal"], r["host"],
                   r["operation"], r["permission"]) for r in rows)
    want = [("TOPIC", TOPIC, "LITERAL", "User:carol", "*", "DESCRIBE", "ALLOW"),
            ("TOPIC", TOPIC, "LITERAL", "User:carol", "*", "WRITE", "ALLOW")]
    assert ours == want, ours
    with AclAdmin(BROKER.bootstrap) as a:
        assert a.listed() == want, a.listed()

    cli(["produce", TOPIC], CAROL, input=b"a\nb\nc\n")
    c = Consumer({"bootstrap.servers": BROKER.bootstrap, "broker.address.family": "v4", "group.id": "cli-sec-check",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([TOPIC])
    got = []
    try:
        while len(got) < 3:
            m = c.poll(BOUND)
            assert m is not None, "read %s of carol's records in %.0f s" % (got, BOUND)
            if not m.error():
                got.append(m.value())
    finally:
        c.close()
    assert got == [b"a", b"b", b"c"], got

    _, err = cli(["consume", TOPIC, "-o", "beginning", "-e"], CAROL, expect=1)
    assert "TOPIC_AUTHORIZATION_FAILED" in err, err
    cli(["acl", "create", "--principal", "User:carol", "--operation", "READ", "--topic", "cli-", "--pattern",
         "prefixed"], ADMIN)
    out, _ = cli(["consume", TOPIC, "-o", "beginning", "-e", "-f", "%s\n"], CAROL)
    assert out == "a\nb\nc\n", out
    matching = json.loads(cli(["acl", "list", "--topic", TOPIC, "--pattern", "match", "-o", "json"], ADMIN)[0])
    assert sorted((r["pattern_type"], r["resource_name"], r["operation"]) for r in matching) == [
        ("LITERAL", TOPIC, "DESCRIBE"), ("LITERAL", TOPIC, "WRITE"), ("PREFIXED", "cli-", "READ")], matching

    out, _ = cli(["acl", "delete", "--principal", "User:carol"], ADMIN)
    assert out.startswith("deleted 3 binding(s)"), out
    assert json.loads(cli(["acl", "list", "-o", "json"], ADMIN)[0]) == []
    with AclAdmin(BROKER.bootstrap) as a:
        assert a.listed() == [], a.listed()
    _, err = cli(["produce", TOPIC], CAROL, expect=1, input=b"d\n")
    assert "CLUSTER_AUTHORIZATION_FAILED" in err, err


def client_certificate_is_the_principal():
    out, _ = run(["topic", "list"] + mtls())
    assert TOPIC not in out.split(), out  # DESCRIBE not granted: the topic is not listed
    cli(["acl", "create", "--principal", CLIENT_DN, "--operation", "describe", "--topic", TOPIC], ADMIN)
    out, _ = run(["topic", "list"] + mtls())
    assert TOPIC in out.split(), out
    _, err = run(["topic", "list"] + mtls(with_certificate=False), expect=3)
    assert "certificate required" in err, err
    cli(["acl", "delete", "--principal", CLIENT_DN], ADMIN)


def deleted_user_is_refused():
    out, _ = cli(["user", "delete", "carol"], ADMIN)
    assert "SCRAM-SHA-256 credential deleted" in out and "SCRAM-SHA-512 credential deleted" in out, out
    assert json.loads(cli(["user", "list", "-o", "json"], ADMIN)[0]) == []
    _, err = cli(["topic", "list"], CAROL, expect=1)
    assert "SASL_AUTHENTICATION_FAILED" in err, err


def error_paths():
    _, err = cli(["topic", "list"], ("PLAIN", "admin", "wrong"), expect=1)
    assert "SASL_AUTHENTICATION_FAILED" in err, err
    # The system's CAs do not trust the test CA.
    words = as_user(*ADMIN)
    at = words.index("ssl.ca.location=" + CERTS.ca[0])
    _, err = run(["topic", "list"] + words[:at - 1] + words[at + 1:], expect=3)
    assert "certificate verify failed" in err, err
    # librdkafka's default mechanism, GSSAPI, is not one the CLI speaks.
    _, err = run(["topic", "list", "-b", BROKER.sasl_bootstrap, "-X", "security.protocol=SASL_SSL"], expect=2)
    assert "GSSAPI" in err, err
    _, err = run(["topic", "list", "-b", BROKER.sasl_bootstrap, "-X", "security.protocol=SASL_SSL",
                  "-X", "sasl.mechanism=PLAIN"], expect=2)
    assert "sasl.username" in err, err
    _, err = run(["topic", "list", "-b", BROKER.sasl_bootstrap, "-X", "security.protocol=SASL_SSL",
                  "-X", "sasl.mechanism=GSSAPI", "-X", "sasl.username=a", "-X", "sasl.password=b"], expect=2)
    assert "GSSAPI" in err, err
    _, err = run(["topic", "list", "-b", BROKER.bootstrap, "-X", "security.protocol=TLS"], expect=2)
    assert "security.protocol" in err, err
    _, err = run(["acl", "delete"] + as_user(*ADMIN), expect=2)
    assert "--principal" in err, err
    _, err = run(["user", "create", "x", "--password", "p", "--iterations", "100"] + as_user(*ADMIN), expect=2)
    assert "4096" in err, err


def main():
    global RUNNEL, BROKER, CERTS, MTLS_PORT
    RUNNEL = sys.argv[1] if len(sys.argv) > 1 else runnel_binary()
    CERTS = tls.CERTS = Certs()
    mechanisms = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    jaas = {"PLAIN": PLAIN_JAAS, "SCRAM-SHA-256": SCRAM_JAAS, "SCRAM-SHA-512": SCRAM_JAAS}
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
                 "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SSL",
                 "ssl.keystore.type": "PKCS12", "ssl.keystore.location": CERTS.server_p12,
                 "ssl.keystore.password": "storepass",
                 "listener.name.mtls.ssl.client.auth": "required",
                 "listener.name.mtls.ssl.truststore.type": "PKCS12",
                 "listener.name.mtls.ssl.truststore.location": CERTS.trust_p12,
                 "listener.name.mtls.ssl.truststore.password": "trustpass",
                 "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                 "allow.everyone.if.no.acl.found": "false",
                 "super.users": "User:ANONYMOUS;User:admin"}
    try:
        with SaslBroker("SASL_SSL", "SASL_SSL", mechanisms, jaas, overrides) as b:
            BROKER = b
            m = re.search(r"listening on MTLS://127\.0\.0\.1:(\d+) \(SSL\)", b.log_text())
            assert m, "no MTLS listener in the log"
            MTLS_PORT = int(m.group(1))
            return run_tests([
                ("runnel user create/list: kafka-configs and librdkafka agree", users_and_credentials),
                ("runnel acl create/list/delete gate a SCRAM user; kafka-python sees the same bindings",
                 acls_gate_carol),
                ("a client certificate is the principal on an mTLS listener", client_certificate_is_the_principal),
                ("runnel user delete: the user can no longer authenticate", deleted_user_is_refused),
                ("wrong passwords, untrusted certificates, incomplete -X: exit codes 1, 3, 2", error_paths),
            ])
    finally:
        CERTS.close()


if __name__ == "__main__":
    sys.exit(main())
