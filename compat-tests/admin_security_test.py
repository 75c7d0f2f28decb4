"""TLS and authentication on the admin listener (issue 17), driven with
Python `requests` as users drive REST Proxy.

Broker 1: runnel.admin.listeners=http://127.0.0.1:0,https://127.0.0.1:0 with
the ssl.* key store, and listener.name.https.ssl.client.auth=required with
the test CA as trust store and a mapping rule that makes a certificate's CN
its user:
  - over https with the CA, /v1/status/ready answers; a client that does not
    trust the CA, or sends no certificate, or one from a CA nobody trusts,
    fails the handshake; plain HTTP to the https port gets no answer;
  - REST produce over https with the client certificate is User:client to
    the authorizer: refused (403, 40301) until an ACL grants it, then
    appended, and the record reads back exactly;
  - the http listener beside it is User:ANONYMOUS.

Broker 2: runnel.admin.authentication.method=BASIC against SCRAM users:
  - no Authorization header, a wrong password, an unknown user or a
    malformed header: 401 with WWW-Authenticate: Basic and a JSON body, and
    the broker still serves the connection's next request;
  - the skip paths (/v1/status/live and /ready) need no credentials,
    /metrics and the REST paths do;
  - alice (SCRAM-SHA-512) and bob (SCRAM-SHA-256) with valid passwords:
    alice's produce is allowed by her ACL, bob's refused with 40301; a REST
    consumer instance alice created is 40403 to bob; after
    alice's password changes, the old one is refused and the new accepted
    (the remembered verification follows the credential).

usage: /usr/bin/python3 admin_security_test.py <runnel binary>
"""

import base64
import json
import socket
import ssl
import sys
import time

import requests
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import ACLOperation, ResourceType

from acl_admin import AclAdmin, binding

from runnel_harness import Runnel, run_tests
from scram_admin import upsert_raw
from test_certs import Certs

TIMEOUT = 15
V2_BINARY = "application/vnd.kafka.binary.v2+json"
V2_ANSWER = "application/vnd.kafka.v2+json"
AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:ANONYMOUS"}


def b64(data):
    return base64.b64encode(data).decode()


def create_topic(broker, topic):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(TIMEOUT)


def allow(broker, principal, topic):
    with AclAdmin(broker.bootstrap) as admin:
        admin.create(*(binding(op, ResourceType.TOPIC, topic, principal=principal)
                       for op in (ACLOperation.WRITE, ACLOperation.DESCRIBE)))


def read_values(broker, topic):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "admin-security-reader",
                  "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        _, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=TIMEOUT)
        out = []
        deadline = time.monotonic() + TIMEOUT
        while len(out) < high and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                out.append(m.value())
        return out
    finally:
        c.close()


def produce(session, base, topic, value, **kw):
    return session.post(base + "/topics/" + topic, data=json.dumps({"records": [{"value": b64(value)}]}),
                        headers={"Content-Type": V2_BINARY, "Accept": V2_ANSWER}, timeout=TIMEOUT, **kw)


def expect_403(r, topic):
    assert r.status_code == 403, (r.status_code, r.text)
    assert r.json()["error_code"] == 40301 and topic in r.json()["message"], r.text


def tls_tests(binary, certs):
    broker = Runnel(binary=binary, overrides=dict(AUTHORIZER, **{
        "runnel.admin.listeners": "http://127.0.0.1:0,https://127.0.0.1:0",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": certs.server_pem,
        "ssl.key.password": "keypass",
        "listener.name.https.ssl.client.auth": "required",
        "listener.name.https.ssl.truststore.type": "PEM",
        "listener.name.https.ssl.truststore.location": certs.ca[0],
        "listener.name.https.ssl.principal.mapping.rules": "RULE:^.*CN=([^,]*).*$/$1/,DEFAULT",
    }))
    with broker:
        https = "https://127.0.0.1:%d" % broker.admin_port("https")
        http = "http://127.0.0.1:%d" % broker.admin_port("http")
        client = (certs.client[0], certs.client[1])

        def handshake_refusals():
            r = requests.get(https + "/v1/status/ready", verify=certs.ca[0], cert=client, timeout=TIMEOUT)
            assert r.status_code == 200 and r.json() == {"ready": True}, r.text
            for kwargs in ({"verify": certs.ca[0]},  # no client certificate
                           {"verify": certs.ca[0], "cert": (certs.stranger[0], certs.stranger[1])},
                           {"verify": certs.other_ca[0], "cert": client}):  # the server is not trusted
                try:
                    r = requests.get(https + "/v1/status/ready", timeout=TIMEOUT, **kwargs)
                except requests.exceptions.RequestException:
                    continue
                raise AssertionError("answered %d with %r" % (r.status_code, kwargs))
            # Plain HTTP on the TLS port: the server waits for a ClientHello
            # and drops what is not one; no HTTP answer comes back.
            with socket.create_connection(("127.0.0.1", broker.admin_port("https")), timeout=TIMEOUT) as s:
                s.sendall(b"GET /v1/status/ready HTTP/1.1\r\nHost: x\r\n\r\n")
                try:
                    answer = s.recv(4096)
                except (ConnectionResetError, socket.timeout):
                    answer = b""
                assert not answer.startswith(b"HTTP/"), answer

        def certificate_principal():
            topic = "admin-tls-topic"
            create_topic(broker, topic)
            # Per request: a Session's verify yields to REQUESTS_CA_BUNDLE.
            session = requests.Session()
            tls = {"verify": certs.ca[0], "cert": client}
            expect_403(produce(session, https, topic, b"before", **tls), topic)
            allow(broker, "User:client", topic)
            r = produce(session, https, topic, b"over tls \x00\xff", **tls)
            assert r.status_code == 200 and r.json()["offsets"][0]["error_code"] is None, r.text
            # The plain listener beside it: User:ANONYMOUS, a super user here.
            r = produce(requests.Session(), http, topic, b"anonymous")
            assert r.status_code == 200, r.text
            assert read_values(broker, topic) == [b"over tls \x00\xff", b"anonymous"]
            metrics = session.get(https + "/metrics", timeout=TIMEOUT, **tls)
            assert metrics.status_code == 200 and "kafka_server_brokertopicmetrics" in metrics.text

        return run_tests([("https handshakes and refusals", handshake_refusals),
                          ("client certificate principal", certificate_principal)], broker)


def basic_tests(binary):
    broker = Runnel(binary=binary, overrides=dict(AUTHORIZER, **{
        "runnel.admin.listeners": "http://127.0.0.1:0",
        "runnel.admin.authentication.method": "BASIC",
    }))
    with broker:
        base = "http://127.0.0.1:%d" % broker.admin_port()
        topic = "admin-basic-topic"

        def refusals():
            assert upsert_raw(broker.port, "alice", "SCRAM-SHA-512", "alice-secret") == (0, None)
            assert upsert_raw(broker.port, "bob", "SCRAM-SHA-256", "bob-secret", iterations=8192) == (0, None)
            create_topic(broker, topic)
            session = requests.Session()  # one keep-alive connection throughout
            for auth, headers in ((None, {}), (("alice", "wrong"), {}), (("carol", "alice-secret"), {}),
                                  (None, {"Authorization": "Basic %%%"}),
                                  (None, {"Authorization": "Bearer abc"})):
                r = session.post(base + "/topics/" + topic, auth=auth, timeout=TIMEOUT,
                                 data=json.dumps({"records": [{"value": b64(b"x")}]}),
                                 headers=dict(headers, **{"Content-Type": V2_BINARY}))
                assert r.status_code == 401, (auth, headers, r.status_code, r.text)
                assert r.headers["WWW-Authenticate"] == 'Basic realm="runnel"', r.headers
                assert r.json()["error_code"] == 401, r.text
                assert session.get(base + "/metrics", timeout=TIMEOUT).status_code == 401
            for path in ("/v1/status/live", "/v1/status/ready"):
                assert session.get(base + path, timeout=TIMEOUT).status_code == 200, path
            assert session.get(base + "/metrics", auth=("bob", "bob-secret"), timeout=TIMEOUT).status_code == 200
            assert session.get(base + "/v1/topics", auth=("bob", "bob-secret"), timeout=TIMEOUT).status_code == 200

        def users_are_principals():
            allow(broker, "User:alice", topic)
            alice = requests.Session()
            alice.auth = ("alice", "alice-secret")
            for i in range(3):
                r = produce(alice, base, topic, b"alice-%d" % i)
                assert r.status_code == 200, r.text
            bob = requests.Session()
            bob.auth = ("bob", "bob-secret")
            expect_403(produce(bob, base, topic, b"bob"), topic)
            assert read_values(broker, topic) == [b"alice-%d" % i for i in range(3)]

        def consumers_are_their_creators():
            # A REST consumer instance reads and commits with its creator's
            # rights: to anyone else it does not exist.
            alice = requests.Session()
            alice.auth = ("alice", "alice-secret")
            bob = requests.Session()
            bob.auth = ("bob", "bob-secret")
            v2 = {"Content-Type": "application/vnd.kafka.v2+json"}
            r = alice.post(base + "/consumers/basic-group", data=json.dumps({"name": "c1"}), headers=v2,
                           timeout=TIMEOUT)
            assert r.status_code == 200, r.text
            inst = base + "/consumers/basic-group/instances/c1"
            r = alice.post(inst + "/subscription", data=json.dumps({"topics": [topic]}), headers=v2, timeout=TIMEOUT)
            assert r.status_code == 204, r.text
            for method in ("GET", "DELETE"):
                r = bob.request(method, inst + ("/subscription" if method == "GET" else ""), timeout=TIMEOUT)
                assert r.status_code == 404 and r.json()["error_code"] == 40403, (method, r.status_code, r.text)
            r = alice.get(inst + "/subscription", timeout=TIMEOUT)
            assert r.status_code == 200 and r.json() == {"topics": [topic]}, r.text
            assert alice.delete(inst, timeout=TIMEOUT).status_code == 204

        def password_change():
            assert upsert_raw(broker.port, "alice", "SCRAM-SHA-512", "new-secret") == (0, None)
            old = produce(requests.Session(), base, topic, b"old", auth=("alice", "alice-secret"))
            assert old.status_code == 401, old.text
            new = produce(requests.Session(), base, topic, b"new", auth=("alice", "new-secret"))
            assert new.status_code == 200, new.text

        return run_tests([("basic refusals and skip paths", refusals),
                          ("basic users are ACL principals", users_are_principals),
                          ("REST consumer instances answer only their creator", consumers_are_their_creators),
                          ("basic after a password change", password_change)], broker)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    certs = Certs()
    try:
        failed = tls_tests(binary, certs)
    finally:
        certs.close()
    failed |= basic_tests(binary)
    return failed


if __name__ == "__main__":
    sys.exit(main())
