"""SCRAM users through Kafka 4.1.1's own kafka-configs (kafka.admin.ConfigCommand,
jars from storage/interop/kafka_jars.sh) and DescribeUserScramCredentials
sent by hand to one broker, for the SCRAM tests.

  - ConfigsTool: --alter --add-config / --delete-config and --describe for
    --entity-type users, with what the tool printed and its exit code;
  - described(): the "SCRAM credential configs for user-principal ..." lines
    of --describe as {user: {mechanism: iterations}};
  - describe_raw(): one broker's own answer (the admin client may send its
    describe to any broker it learnt of);
  - upsert_raw(): AlterUserScramCredentials sent by hand, the salted
    password computed here (what kafka-configs sends, without a JVM: the
    matrix's security columns create their users with it on Kafka and Runnel);
  - credential_of(): the StoredKey and ServerKey Kafka's ScramFormatter
    derives from a password, computed here with hashlib (RFC 5802).
"""

import base64
import hashlib
import hmac
import os
import re
import subprocess

import kafka_wire as kw

CONFIG_COMMAND = "kafka.admin.ConfigCommand"
MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
_LINE = re.compile(r"^SCRAM credential configs for user-principal '(.*)' are (.*)$")


class ConfigsTool:
    def __init__(self, classpath):
        self.classpath = classpath

    def run(self, bootstrap, *args):
        """kafka-configs with `args`: (exit code, stdout, stderr)."""
        cmd = ["java", "-Dlog4j2.level=ERROR", "-cp", self.classpath, CONFIG_COMMAND, "--bootstrap-server",
               bootstrap, *args]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        return out.returncode, out.stdout, out.stderr

    def ok(self, bootstrap, *args):
        code, stdout, stderr = self.run(bootstrap, *args)
        assert code == 0, "kafka-configs %s exited %d:\n%s%s" % (" ".join(args), code, stdout, stderr)
        return stdout

    def add(self, bootstrap, user, config):
        return self.ok(bootstrap, "--alter", "--add-config", config, "--entity-type", "users", "--entity-name", user)

    def delete(self, bootstrap, user, mechanism):
        return self.ok(bootstrap, "--alter", "--delete-config", mechanism, "--entity-type", "users",
                       "--entity-name", user)

    def describe(self, bootstrap, user=None):
        args = ["--describe", "--entity-type", "users"] + (["--entity-name", user] if user else [])
        return self.ok(bootstrap, *args)

    def refused(self, bootstrap, *args):
        """A command that must fail: its stderr."""
        code, stdout, stderr = self.run(bootstrap, *args)
        assert code == 1, "kafka-configs %s exited %d, expected 1:\n%s%s" % (" ".join(args), code, stdout, stderr)
        return stderr


def described(text):
    """--describe's SCRAM lines: {user: {mechanism: iterations}}; every line must be one."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _LINE.match(line)
        assert m, "unexpected kafka-configs line: %r" % line
        infos = {}
        for item in m.group(2).split(", "):
            mechanism, iterations = item.split("=iterations=")
            infos[mechanism] = int(iterations)
        out[m.group(1)] = infos
    return out


def describe_raw(port, users=None, correlation_id=1):
    """DescribeUserScramCredentials v0 on one broker: (error, {user: (error, message, {mechanism: iterations})})."""
    body = kw.uvarint(0) if users is None else kw.uvarint(len(users) + 1) + b"".join(
        kw.uvarint(len(u.encode()) + 1) + u.encode() + kw.uvarint(0) for u in users)
    frame = kw.request(50, 0, correlation_id, body + kw.uvarint(0), flexible=True)
    with kw.Connection(port) as c:
        r = kw.Reader(c.call(frame, correlation_id))
    r.skip_tags()  # response header v1
    r.i32()
    error = r.i16()
    r.compact_string()
    results = {}
    for _ in range(r.uvarint() - 1):
        user, code, message = r.compact_string(), r.i16(), r.compact_string()
        infos = {}
        for _ in range(r.uvarint() - 1):
            mechanism, iterations = r.i8(), r.i32()
            r.skip_tags()
            infos[MECHANISMS[mechanism]] = iterations
        r.skip_tags()
        results[user] = (code, message, infos)
    r.skip_tags()
    assert r.done(), "DescribeUserScramCredentials: bytes left over"
    return error, results


def upsert_raw(port, user, mechanism, password, iterations=4096, correlation_id=1):
    """AlterUserScramCredentials v0 on one broker upserting one credential
    (one per request: Kafka refuses two changes of a user in one request);
    returns (error code, message) of its one result."""
    code = {v: k for k, v in MECHANISMS.items()}[mechanism]
    salt = os.urandom(32)
    salted = hashlib.pbkdf2_hmac(HASHES[mechanism], password.encode(), salt, iterations)
    upsertion = (kw.uvarint(len(user.encode()) + 1) + user.encode() + kw.i8(code) + kw.i32(iterations)
                 + kw.uvarint(len(salt) + 1) + salt + kw.uvarint(len(salted) + 1) + salted + kw.uvarint(0))
    body = kw.uvarint(1) + kw.uvarint(2) + upsertion + kw.uvarint(0)  # no deletions, one upsertion, no tags
    frame = kw.request(51, 0, correlation_id, body, flexible=True)
    with kw.Connection(port, timeout=60) as c:
        r = kw.Reader(c.call(frame, correlation_id))
    r.skip_tags()  # response header v1
    r.i32()
    results = []
    for _ in range(r.uvarint() - 1):
        results.append((r.compact_string(), r.i16(), r.compact_string()))
        r.skip_tags()
    r.skip_tags()
    assert r.done() and len(results) == 1 and results[0][0] == user, results
    return results[0][1], results[0][2]


def credential_of(mechanism, password, salt, iterations):
    """(stored_key, server_key) as Kafka's ScramFormatter derives them."""
    h = HASHES[mechanism]
    salted = hashlib.pbkdf2_hmac(h, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", h).digest()
    return hashlib.new(h, client_key).digest(), hmac.new(salted, b"Server Key", h).digest()


def check_stored(stored_text, user, mechanism, password, iterations):
    """The stored value (runnel-scram-credentials.json or the etcd key) holds
    Kafka's credential string for `user` derived from `password`, and not the password."""
    import json
    doc = json.loads(stored_text)
    fields = dict(f.split("=", 1) for f in doc["users"][user][mechanism].split(","))
    assert int(fields["iterations"]) == iterations, fields
    salt = base64.b64decode(fields["salt"])
    stored_key, server_key = credential_of(mechanism, password, salt, iterations)
    assert base64.b64decode(fields["stored_key"]) == stored_key, "StoredKey of %s %s" % (user, mechanism)
    assert base64.b64decode(fields["server_key"]) == server_key, "ServerKey of %s %s" % (user, mechanism)
    assert password not in stored_text, "the password is stored"
