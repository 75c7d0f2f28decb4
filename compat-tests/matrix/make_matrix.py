#!/usr/bin/env python3
"""Writes compat-tests/MATRIX.md from the result files run_matrix.py made:
results/kafka.json and results/runnel.json (one broker each),
results/kafka-cluster.json and results/runnel-cluster.json (three brokers,
run_matrix.py --cluster), and results/kafka-security.json and
results/runnel-security.json (the security columns, run_matrix.py
--security). Clients are rows, scenarios columns; each cell says whether the
scenario passed on Kafka and on Runnel.

    /usr/bin/python3 compat-tests/matrix/make_matrix.py
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "MATRIX.md")

MARK = {"pass": "✅", "fail": "❌", "unsupported": "—", "not_implemented": "·", None: "?"}
KNOWN_BUG = "known client bug ("  # how run_matrix.py begins the detail of a failure about.json excuses
RUNNEL_GAP = "not yet in Runnel: "  # and that of a scenarios.json runnel_cluster_gap


def client_bug(res):
    """A failure that about.json's known_failures puts down to the client."""
    return bool(res) and res["status"] == "fail" and res.get("detail", "").startswith(KNOWN_BUG)


def runnel_gap(res):
    """A scenario Runnel does not serve yet in this mode (scenarios.json)."""
    return bool(res) and res["status"] == "fail" and res.get("detail", "").startswith(RUNNEL_GAP)


def mark(res):
    return MARK[(res or {}).get("status")] + (" (client bug)" if client_bug(res) else
                                               " (not yet)" if runnel_gap(res) else "")


def load(name):
    path = os.path.join(HERE, "results", name + ".json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def cell(k, r):
    ks, rs = (k or {}).get("status"), (r or {}).get("status")
    if ks == "unsupported" and rs == "unsupported":
        return "n/a"
    if ks == "not_implemented" and rs == "not_implemented":
        return "not run"
    if client_bug(k) and client_bug(r):
        return "client bug"
    return "K %s · R %s" % (mark(k), mark(r))


def section(scenarios, kafka, runnel):
    """The table, totals, cells that pass on Kafka and fail on Runnel, and
    notes of one pair of result files, as lines."""
    clients = sorted(set(kafka) | set(runnel), key=lambda c: ((runnel.get(c) or kafka.get(c))["order"], c))
    lines = [
        "| Client | " + " | ".join(s["title"] for s in scenarios) + " |",
        "|---|" + "---|" * len(scenarios),
    ]
    notes, regressions, gaps = [], [], {}
    for c in clients:
        title = (runnel.get(c) or kafka.get(c))["title"]
        row = []
        for s in scenarios:
            k = kafka.get(c, {}).get("scenarios", {}).get(s["id"])
            r = runnel.get(c, {}).get("scenarios", {}).get(s["id"])
            row.append(cell(k, r))
            if (k or {}).get("status") == "pass" and (r or {}).get("status") == "fail" and not client_bug(r):
                regressions.append("%s, %s" % (title, s["title"]))
            if runnel_gap(r):
                # One note per scenario: the gap is Runnel's, whatever the client.
                gaps.setdefault(s["title"], (r["detail"], []))[1].append(title)
                r = None
            same = k and r and (k["status"], k.get("detail")) == (r["status"], r.get("detail"))
            for broker, res in ((("Kafka and Runnel", k),) if same else (("Kafka", k), ("Runnel", r))):
                if res and res["status"] != "pass" and res.get("detail"):
                    notes.append("- %s, %s, %s: %s — %s" % (title, s["title"], broker, res["status"], res["detail"]))
        lines.append("| %s | %s |" % (title, " | ".join(row)))
    ids = {s["id"] for s in scenarios}
    totals = []
    for name, res in (("Kafka", kafka), ("Runnel", runnel)):
        cells = [v for c in res.values() for sid, v in c["scenarios"].items() if sid in ids]
        count = lambda st: sum(v["status"] == st for v in cells)  # noqa: E731
        bugs = sum(client_bug(v) for v in cells)
        of_which = "" if not bugs else " (1 a known client bug)" if bugs == 1 else " (%d known client bugs)" % bugs
        not_yet = sum(runnel_gap(v) for v in cells)
        of_which += " (%d not served by Runnel yet)" % not_yet if not_yet else ""
        totals.append("%s: %d passed, %d failed%s, %d not expressible by the client%s" % (
            name, count("pass"), count("fail"), of_which, count("unsupported"),
            ", %d not run (driver not written yet)" % count("not_implemented") if count("not_implemented") else ""))
    lines += ["", "Totals — " + "; ".join(totals) + ".", "",
              "**Passes on Kafka, fails on Runnel:** " + ("; ".join(regressions) if regressions else "none") + ".", ""]
    notes += ["- %s, Runnel (%s): fail — %s" % (t, "every client" if len(cs) == len(clients) else ", ".join(cs), d)
              for t, (d, cs) in gaps.items()]
    if notes:
        lines += ["### Notes on cells that are not a pass", ""] + notes + [""]
    return lines


def main():
    with open(os.path.join(HERE, "scenarios.json")) as f:
        scenarios = json.load(f)
    kafka, runnel = load("kafka"), load("runnel")
    kafka_c, runnel_c = load("kafka-cluster"), load("runnel-cluster")
    kafka_s, runnel_s = load("kafka-security"), load("runnel-security")
    results = [kafka, runnel, kafka_c, runnel_c, kafka_s, runnel_s]
    if not any(results):
        sys.exit("no results under %s/results: run run_matrix.py first" % HERE)

    dates = sorted({v["date"] for res in results for v in res.values()})
    security = [s for s in scenarios if s.get("security")]
    scenarios = [s for s in scenarios if not s.get("security")]
    single = [s for s in scenarios if not s.get("cluster_only")]
    lines = [
        "# Compatibility matrix",
        "",
        "Generated by `compat-tests/matrix/make_matrix.sh` (run on %s): every client's" % ", ".join(dates),
        "scenario code runs unchanged against Apache Kafka 4.1.1 (KRaft, from the Maven Central jars)",
        "and against Runnel, each broker or cluster fresh per client. A cell reads",
        "**K** (Kafka) and **R** (Runnel): ✅ passed, ❌ failed, — the client cannot express the",
        "scenario; n/a when it cannot on either; · or \"not run\": the driver has no code for it yet;",
        "\"client bug\": a failure the client's own bug explains (its `about.json`), on both brokers;",
        "❌ (not yet): a scenario Runnel does not serve yet in that mode (`scenarios.json`); ?: not run on",
        "that broker yet (a column newer than the broker's last full run).",
        "CI runs the Runnel side of every row (ctest labels `matrix`, `matrix-cluster` and `matrix-security`).",
        "Scenario definitions: `compat-tests/matrix/README.md`; drivers: `compat-tests/matrix/clients/`.",
        "",
        "## One broker",
        "",
        "Scenarios that need a cluster are in the next section.",
        "",
    ]
    lines += section(single, kafka, runnel)
    if kafka_c or runnel_c:
        lines += [
            "## Three brokers",
            "",
            "`run_matrix.py --cluster`: three Runnel brokers (etcd, `runnel serve` x 3) or three Kafka",
            "KRaft broker+controller nodes; default.replication.factor=3, min.insync.replicas=2,",
            "offsets.topic.replication.factor=3, broker session timeout 3 s; clients bootstrap from all",
            "three. Topics the drivers create have a replica on every broker. *Leader killed while",
            "producing + consuming* (leader_failover): the harness SIGKILLs the partition's leader",
            "while an acks=all, idempotent producer and a consumer run, and starts it again after a",
            "new leader is named; every record sent must be acknowledged and consumed once, in order.",
            "",
        ]
        lines += section(scenarios, kafka_c, runnel_c)
    if kafka_s or runnel_s:
        lines += [
            "## Security",
            "",
            "`run_matrix.py --security`: one broker per client with a listener per column, the same",
            "settings on Runnel and Kafka (`compat-tests/matrix/security_columns.py`): *SSL* (TLS, no",
            "client certificate), *mTLS* (an SSL listener with ssl.client.auth=required), SASL_PLAINTEXT",
            "with *PLAIN* (a JAAS user) and *SCRAM-SHA-256* / *-512* (a user made with",
            "AlterUserScramCredentials), and *SASL_SSL* with SCRAM-SHA-512. The broker's key store is",
            "PKCS12, its trust store the test CA's PEM; clients trust that CA, check the broker's host",
            "name and, for mTLS, present a client certificate (PEM files; the Java client and the CLI",
            "tools a PEM key store). In each column, over that listener only, the client creates a",
            "topic of two partitions, sees the broker advertised on that listener, produces with",
            "acks=all, consumes in a group and reads its commit back. Flume's Kafka sink row,",
            "which only produces: it sends over the column's listener (a PKCS12 client key store for",
            "mTLS: kafka-clients 2.7.2 takes a PEM key store only with an encrypted key) and a",
            "kafka-clients reader reads the records back over the same listener; creating the topic",
            "and the group's consume and commit are not expressible in Flume (its cells' details say so).",
            "Flume's Kafka source and Kafka channel rows reach the column's listener with their consumer",
            "(the channel's producer too) and consume in a group; the test's own client produces the",
            "source's records and reads both rows' commits back over the broker's PLAINTEXT listener.",
            "",
            "Known client limitations (the notes below give each one's reason): librdkafka before 2.6.1",
            "(Debian's 2.0.2, the librdkafka and kcat rows) fails SCRAM on Kafka 4.x, whose nonce check",
            "is strict, while Runnel accepts its client-final message; kafka-python 2.3.3 drops a TLS 1.3",
            "connection when the broker's post-handshake session ticket comes before its first request",
            "there, on either broker, in some runs and not others.",
            "",
        ]
        lines += section(security, kafka_s, runnel_s)
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print("wrote %s" % OUT)


if __name__ == "__main__":
    main()
