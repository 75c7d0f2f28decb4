"""The TLS tests' PKI, made with the `openssl` CLI in a temporary directory:
a CA, a server certificate for localhost/127.0.0.1 (PEM with an encrypted
key, PKCS12), a client certificate (PEM, PEM key store, PKCS12), an expired
one, one from a CA nobody trusts, and a PKCS12 trust store.

Used by security_tls_test.py, security_sasl_test.py and the compatibility
matrix's security columns (matrix/run_matrix.py --security).
"""

import os
import shutil
import subprocess
import tempfile
import uuid


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=60)


class Certs:
    """The test's PKI, in a temporary directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="runnel-tls-certs-")
        self.ca = self._ca("ca", "/O=Runnel/CN=Runnel Test CA")
        self.other_ca = self._ca("other-ca", "/CN=Unknown CA")
        self.server = self._leaf("server", "/O=Runnel/CN=localhost", self.ca, 2,
                                 "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n")
        self.elsewhere = self._leaf("elsewhere", "/O=Runnel/CN=elsewhere.example", self.ca, 2,
                                    "subjectAltName=DNS:elsewhere.example\nextendedKeyUsage=serverAuth,clientAuth\n")
        self.elsewhere_pem = self.path("elsewhere-keystore.pem")
        self._concat(self.elsewhere_pem, self.elsewhere[1], self.elsewhere[0])
        self.client = self._leaf("client", "/C=US/O=Runnel/OU=eng/CN=client", self.ca, 2,
                                 "extendedKeyUsage=clientAuth\n")
        self.expired = self._leaf("expired", "/O=Runnel/CN=expired", self.ca, -1, "extendedKeyUsage=clientAuth\n")
        self.stranger = self._leaf("stranger", "/CN=stranger", self.other_ca, 2, "extendedKeyUsage=clientAuth\n")
        # Key stores as Kafka users keep them.
        self.server_pem = self.path("server-keystore.pem")  # encrypted PKCS#8 key + chain
        openssl("pkcs8", "-topk8", "-in", self.server[1], "-out", self.path("server-enc.key"),
                "-passout", "pass:keypass", "-v2", "aes-256-cbc")
        self._concat(self.server_pem, self.path("server-enc.key"), self.server[0], self.ca[0])
        self.server_p12 = self.path("server.p12")
        openssl("pkcs12", "-export", "-in", self.server[0], "-inkey", self.server[1], "-certfile", self.ca[0],
                "-name", "broker", "-out", self.server_p12, "-passout", "pass:storepass")
        self.trust_p12 = self.path("truststore.p12")
        openssl("pkcs12", "-export", "-nokeys", "-in", self.ca[0], "-out", self.trust_p12,
                "-passout", "pass:trustpass")
        self.client_keystore_pem = self.path("client-keystore.pem")  # for the Java client
        self._concat(self.client_keystore_pem, self.client[1], self.client[0])
        self.client_p12 = self.path("client.p12")
        openssl("pkcs12", "-export", "-in", self.client[0], "-inkey", self.client[1], "-out", self.client_p12,
                "-passout", "pass:clientpass")
        # Java's JKS magic, which Runnel must refuse with how to convert it.
        self.jks = self.path("server.jks")
        with open(self.jks, "wb") as f:
            f.write(b"\xfe\xed\xfe\xed\x00\x00\x00\x02\x00\x00\x00\x00")

    def path(self, name):
        return os.path.join(self.dir, name)

    def _concat(self, out, *parts):
        with open(out, "wb") as o:
            for p in parts:
                with open(p, "rb") as f:
                    o.write(f.read())

    def _ca(self, name, subject):
        cert, key = self.path(name + ".pem"), self.path(name + ".key")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                "-out", cert, "-subj", subject, "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        return cert, key

    def _leaf(self, name, subject, ca, days, extensions):
        """A certificate signed by `ca`; negative `days` makes it expired (notAfter in the past)."""
        cert, key, csr, ext = (self.path(name + s) for s in (".pem", ".key", ".csr", ".ext"))
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                "-out", csr, "-subj", subject)
        with open(ext, "w") as f:
            f.write(extensions)
        openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-set_serial",
                str(uuid.uuid4().int >> 64), "-days", str(days), "-extfile", ext, "-out", cert)
        return cert, key

    def read(self, path):
        with open(path) as f:
            return f.read()

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)
