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
system and mechanism, and Runnel / Kafka: the systems take turns within
each round (order swapped every round), the ratio is taken within a round
and the median over rounds is reported with the per-round values.

usage: /usr/bin/python3 bench/sasl_auth.py --runnel build/release/runnel [--seconds 10] [--procs 2] [--rounds 3]
"""

import argparse
import multiprocessing
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compat-tests"))

import kafka_harness  # noqa: E402
import security_sasl_test as s  # noqa: E402  (its broker, SCRAM client and wire helpers)
from cluster_replication import cpu_seconds  # noqa: E402  (beside this file)
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


def cache_salted_passwords():
    """In this (worker) process, ScramClient's PBKDF2 result is kept per
    (hash, password, salt, iterations): the client's cost per exchange is
    then a few HMACs."""
    original, cache = s.hashlib.pbkdf2_hmac, {}

    def pbkdf2(name, password, salt, iterations):
        key = (name, password, salt, iterations)
        if key not in cache:
            cache[key] = original(name, password, salt, iterations)
        return cache[key]

    s.hashlib.pbkdf2_hmac = pbkdf2


def authenticate_once(port, mechanism):
    """One connection, the whole SCRAM exchange with the server signature checked, closed."""
    c = s.sasl_connect(port, mechanism)
    try:
        client = s.ScramClient(mechanism, "bench", "bench-secret")
        err, message, server_first, _ = s.parse_authenticate(c.call(s.authenticate(2, client.first()), 2))
        assert err == 0, message
        err, message, server_final, _ = s.parse_authenticate(c.call(s.authenticate(3, client.final(server_first)), 3))
        assert err == 0, message
        assert server_final.decode() == "v=" + client.expected_server_signature
    finally:
        c.close()


def worker(port, mechanism, seconds, out):
    cache_salted_passwords()
    n = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        authenticate_once(port, mechanism)
        n += 1
    out.put(n)


def wait_for_user(port, timeout=60):
    """Kafka applies SCRAM changes from its metadata log: bounded wait until
    both mechanisms authenticate."""
    deadline = time.monotonic() + timeout
    for mechanism in MECHANISMS:
        while True:
            try:
                authenticate_once(port, mechanism)
                break
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


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
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    sys.argv[1:] = [args.runnel]  # what runnel_harness reads
    classpath = kafka_harness.kafka_classpath(None)
    runnel = s.SaslBroker("SASL_PLAINTEXT", "SASL_PLAINTEXT", list(MECHANISMS), JAAS)
    runnel.binary = args.runnel
    kafka = SaslKafka()
    results = {}
    loads = [os.getloadavg()[0]]
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
    with runnel, kafka:  # each starts on entering
        systems = [("runnel", runnel.sasl_port, runnel.proc.pid), ("kafka", kafka.sasl_port, kafka.proc.pid)]
        add_user(classpath, runnel.bootstrap)
        add_user(classpath, kafka.bootstrap)
        for _, port, _ in systems:
            wait_for_user(port)
        for r in range(args.rounds):
            for mechanism in MECHANISMS:
                for name, port, pid in (systems if r % 2 == 0 else systems[::-1]):
                    rate, cpu = measure(port, pid, mechanism, args.seconds, args.procs)
                    results.setdefault((name, mechanism), []).append((rate, cpu))
                    loads.append(os.getloadavg()[0])
                    print("round %d %-7s %-14s %8.0f auth/s, broker CPU %.3f s per 1000, load %.1f" % (
                        r + 1, name, mechanism, rate, cpu, loads[-1]), flush=True)
    print("load average: median %.1f (%.1f-%.1f)" % (statistics.median(loads), min(loads), max(loads)))
    for mechanism in MECHANISMS:
        rate = {n: [x[0] for x in results[(n, mechanism)]] for n in ("runnel", "kafka")}
        cpu = {n: statistics.median(x[1] for x in results[(n, mechanism)]) for n in ("runnel", "kafka")}
        ratios = [a / b for a, b in zip(rate["runnel"], rate["kafka"])]
        cpu_ratios = [a[1] / b[1] for a, b in zip(results[("runnel", mechanism)], results[("kafka", mechanism)])]
        print("%s: runnel %.0f auth/s (%.0f-%.0f; %.3f CPU s/1000), kafka %.0f auth/s (%.0f-%.0f; %.3f CPU s/1000), "
              "runnel/kafka %.2f (rounds %s), CPU per auth runnel/kafka %.2f" % (
                  mechanism, statistics.median(rate["runnel"]), min(rate["runnel"]), max(rate["runnel"]),
                  cpu["runnel"], statistics.median(rate["kafka"]), min(rate["kafka"]), max(rate["kafka"]),
                  cpu["kafka"], statistics.median(ratios), ", ".join("%.2f" % x for x in ratios),
                  statistics.median(cpu_ratios)))


if __name__ == "__main__":
    main()
