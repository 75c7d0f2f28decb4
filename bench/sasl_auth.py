#!/usr/bin/python3
"""SCRAM authentications per second (issue 15's numbers): Runnel against
Apache Kafka 4.1.1, each with a SASL_PLAINTEXT listener serving
SCRAM-SHA-256 and SCRAM-SHA-512, measured side by side in one run.

Each broker gets the same user through Kafka's kafka-configs (4096
iterations, Kafka's minimum and librdkafka's default); then --procs client
processes each open a connection, run the whole exchange (SaslHandshake v1,
client-first, client-final, the server signature checked) and close it, for
--seconds, per mechanism. The client caches the salted password per salt
(as any client may: the salt and iterations do not change), so its cost per
exchange is a few HMACs and the broker's share is what is measured. Prints
authentications per second and the broker's CPU seconds per 1000, per
system and mechanism, and Runnel / Kafka.

usage: /usr/bin/python3 bench/sasl_auth.py --runnel build/release/runnel [--seconds 10] [--procs 2]
"""

import argparse
import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compat-tests"))

import kafka_harness  # noqa: E402
import kafka_wire as w  # noqa: E402
import security_sasl_test as s  # noqa: E402  (its broker, SCRAM client and wire helpers)
from security_tls_test import java  # noqa: E402

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
JAAS = {m: s.SCRAM_JAAS for m in MECHANISMS}


class SaslKafka(kafka_harness.Kafka):
    """Kafka with a SASL_PLAINTEXT listener beside its PLAINTEXT one."""

    def __init__(self):
        super().__init__()
        self.sasl_port = kafka_harness.free_port()

    def _properties(self):
        props = super()._properties()
        props["listeners"] += ",SASL_PLAINTEXT://127.0.0.1:%d" % self.sasl_port
        props["advertised.listeners"] += ",SASL_PLAINTEXT://127.0.0.1:%d" % self.sasl_port
        props["listener.security.protocol.map"] += ",SASL_PLAINTEXT:SASL_PLAINTEXT"
        props["sasl.enabled.mechanisms"] = ",".join(MECHANISMS)
        for m in MECHANISMS:
            props["listener.name.sasl_plaintext.%s.sasl.jaas.config" % m.lower()] = JAAS[m]
        return props


def cached_client(mechanism, cache):
    """ScramClient whose PBKDF2 result is kept per (salt, iterations)."""
    c = s.ScramClient(mechanism, "bench", "bench-secret")
    original = s.hashlib.pbkdf2_hmac

    def pbkdf2(name, password, salt, iterations):
        key = (name, salt, iterations)
        if key not in cache:
            cache[key] = original(name, password, salt, iterations)
        return cache[key]

    s.hashlib.pbkdf2_hmac = pbkdf2
    return c


def worker(port, mechanism, seconds, out):
    cache = {}
    n = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        c = s.sasl_connect(port, mechanism)
        try:
            client = cached_client(mechanism, cache)
            err, message, server_first, _ = s.parse_authenticate(c.call(s.authenticate(2, client.first()), 2))
            assert err == 0, message
            err, message, server_final, _ = s.parse_authenticate(
                c.call(s.authenticate(3, client.final(server_first)), 3))
            assert err == 0, message
            assert server_final.decode() == "v=" + client.expected_server_signature
        finally:
            c.close()
        n += 1
    out.put(n)


def measure(port, pid, mechanism, seconds, procs):
    q = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=worker, args=(port, mechanism, seconds, q)) for _ in range(procs)]
    cpu = cpu_seconds(pid)
    start = time.monotonic()
    for p in workers:
        p.start()
    total = sum(q.get(timeout=seconds + 120) for _ in workers)
    for p in workers:
        p.join(30)
    elapsed = time.monotonic() - start
    return total / elapsed, (cpu_seconds(pid) - cpu) / total * 1000


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def add_user(classpath, bootstrap):
    for m in MECHANISMS:  # one per request, as Kafka's controller requires
        java(classpath, "kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap, "--alter",
             "--entity-type", "users", "--entity-name", "bench", "--add-config",
             "%s=[iterations=4096,password=bench-secret]" % m)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runnel", required=True)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    sys.argv[1:] = [args.runnel]  # what runnel_harness reads
    classpath = kafka_harness.kafka_classpath(None)
    runnel = s.SaslBroker("SASL_PLAINTEXT", "SASL_PLAINTEXT", list(MECHANISMS), JAAS)
    runnel.binary = args.runnel
    kafka = SaslKafka()
    results = {}
    with runnel, kafka:  # each starts on entering
        add_user(classpath, runnel.bootstrap)
        add_user(classpath, kafka.bootstrap)
        time.sleep(2)  # Kafka applies SCRAM changes from its metadata log
        for r in range(args.rounds):
            for mechanism in MECHANISMS:
                for name, port, pid in (("runnel", runnel.sasl_port, runnel.proc.pid),
                                        ("kafka", kafka.sasl_port, kafka.proc.pid)):
                    rate, cpu = measure(port, pid, mechanism, args.seconds, args.procs)
                    results.setdefault((name, mechanism), []).append((rate, cpu))
                    print("round %d %-7s %-14s %8.0f auth/s, broker CPU %.3f s per 1000" % (
                        r + 1, name, mechanism, rate, cpu), flush=True)
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    for mechanism in MECHANISMS:
        best = {n: max(results[(n, mechanism)]) for n in ("runnel", "kafka")}
        print("%s: runnel %.0f auth/s (%.3f CPU s/1000), kafka %.0f auth/s (%.3f CPU s/1000), runnel/kafka %.2f" % (
            mechanism, best["runnel"][0], best["runnel"][1], best["kafka"][0], best["kafka"][1],
            best["runnel"][0] / best["kafka"][0]))


if __name__ == "__main__":
    main()
