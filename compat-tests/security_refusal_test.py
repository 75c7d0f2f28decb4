"""Security Runnel cannot serve as asked stops startup (issue 12, item 4).

A SASL listener (directly, through Kafka's default
listener.security.protocol.map or a mapped name) left with Kafka's default
mechanism GSSAPI (Kerberos, not implemented), an SSL listener without a key
store, a security key Runnel does not implement (a custom SASL callback
handler, an SslEngineFactory) and an authorizer class other than Kafka's
own must make `runnel serve` exit non-zero with a message naming it, never
serve with less security than asked. PLAINTEXT still starts (the harness's
own start). TLS itself: security_tls_test.py; SASL: security_sasl_test.py;
ACLs: acl_test.py.

usage: /usr/bin/python3 security_refusal_test.py <runnel binary>
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

import kafka_wire as w
from runnel_harness import Runnel, run_tests, runnel_binary

EXIT_BOUND = 60.0  # seconds for a refused start to exit (an ASan build on a loaded machine)


def refused(overrides, must_name):
    """Starts runnel with `overrides`; it must exit non-zero and log `must_name`."""
    tmp = tempfile.mkdtemp(prefix="runnel-security-")
    try:
        args = [runnel_binary(), "serve", "--override", "node.id=1",
                "--override", "log.dirs=" + os.path.join(tmp, "data")]
        if "listeners" not in overrides:
            args += ["--override", "listeners=PLAINTEXT://127.0.0.1:0"]
        for k, v in overrides.items():
            args += ["--override", "%s=%s" % (k, v)]
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            out, _ = proc.communicate(timeout=EXIT_BOUND)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate(timeout=10)
            raise AssertionError("%s: still running after %.0f s (served instead of refusing):\n%s" % (
                overrides, EXIT_BOUND, out.decode(errors="replace")[-2000:]))
        text = out.decode(errors="replace")
        assert proc.returncode != 0, "%s: exited 0:\n%s" % (overrides, text)
        assert must_name in text, "%s: the message does not name %r:\n%s" % (overrides, must_name, text)
        assert "listening on" not in text, "%s: listened before refusing:\n%s" % (overrides, text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_listeners():
    refused({"listeners": "SSL://127.0.0.1:0"}, "needs a key store")
    refused({"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}, "GSSAPI")
    refused({"listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0"}, "GSSAPI")
    refused({"listeners": "CLIENT://127.0.0.1:0",
             "listener.security.protocol.map": "CLIENT:SASL_SSL,CONTROLLER:PLAINTEXT"}, "CLIENT")


def test_keys():
    refused({"ssl.engine.factory.class": "com.example.EngineFactory"}, "ssl.engine.factory.class")
    refused({"sasl.server.callback.handler.class": "com.example.Handler"}, "sasl.server.callback.handler.class")
    # Kafka's StandardAuthorizer is implemented; another class is refused.
    refused({"authorizer.class.name": "com.example.MyAuthorizer"}, "authorizer.class.name")
    refused({"listener.name.plaintext.plain.sasl.login.class": "x"}, "listener.name.plaintext.plain.sasl.login.class")


def test_plaintext_still_served():
    with Runnel(overrides={"security.inter.broker.protocol": "PLAINTEXT"}) as b:
        with w.Connection(b.port) as c:
            err, keys = w.parse_api_versions_v0(c.call(w.api_versions_v0(3), 3))
            assert err == 0 and keys, (err, keys)


if __name__ == "__main__":
    sys.exit(run_tests([
        ("listeners that cannot serve are refused", test_listeners),
        ("security keys are refused", test_keys),
        ("PLAINTEXT is served", test_plaintext_still_served),
    ]))
