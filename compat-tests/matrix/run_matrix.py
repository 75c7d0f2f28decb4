#!/usr/bin/env python3
"""Runs the compatibility matrix's client drivers against one broker.

For each client (a directory under clients/ with an executable `run` and an
about.json) it starts a FRESH broker — Runnel (runnel_harness.Runnel) or
Apache Kafka 4.x in KRaft mode (kafka_harness.Kafka) — with the same
settings, runs

    clients/<client>/run --bootstrap 127.0.0.1:PORT --cache DIR

and reads one JSON line per scenario from its stdout:
    {"scenario": "<id>", "status": "pass"|"fail"|"unsupported", "detail": "..."}

A scenario from scenarios.json that the driver does not report counts as a
failure, as does a driver that exceeds its time. A failure the client's
about.json lists under "known_failures" (a client bug that fails on Kafka
too) is kept in the results but does not fail the run. Results are merged into
--out (one JSON object per client), so clients can be run one at a time.
Exit status 1 when any scenario failed on this broker.

    /usr/bin/python3 compat-tests/matrix/run_matrix.py --broker runnel \
        --runnel build/release/runnel --clients java,franz-go --out results/runnel.json
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import runnel_harness  # noqa: E402

CLIENTS = os.path.join(HERE, "clients")
REPO = os.path.dirname(os.path.dirname(HERE))

# Both brokers get these, beyond the harness's own listener and log dir:
# no 3 s wait before the first rebalance (Kafka's default would make every
# group scenario slower without testing anything more).
BROKER_SETTINGS = {
    "auto.create.topics.enable": "true",
    "num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",
}


def scenarios():
    with open(os.path.join(HERE, "scenarios.json")) as f:
        return [s["id"] for s in json.load(f)]


def all_clients():
    names = [d for d in os.listdir(CLIENTS) if os.path.isfile(os.path.join(CLIENTS, d, "run"))]
    return sorted(names, key=lambda d: (about(d).get("order", 1000), d))


def about(client):
    try:
        with open(os.path.join(CLIENTS, client, "about.json")) as f:
            return json.load(f)
    except OSError:
        return {}


def start_broker(kind, runnel_binary, cache):
    if kind == "runnel":
        return runnel_harness.Runnel(runnel_binary, BROKER_SETTINGS).start()
    import kafka_harness
    return kafka_harness.Kafka(cache_dir=os.path.join(cache, "kafka-jars"), overrides=BROKER_SETTINGS).start()


def pump_stderr(stream, client):
    for line in stream:
        sys.stderr.write("[%s] %s" % (client, line.decode("utf-8", "replace")))
    sys.stderr.flush()


def run_client(client, bootstrap, cache, timeout):
    """Runs one driver; returns ({scenario: {status, detail}}, problem or None)."""
    cmd = [os.path.join(CLIENTS, client, "run"), "--bootstrap", bootstrap, "--cache", cache]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    err = threading.Thread(target=pump_stderr, args=(proc.stderr, client), daemon=True)
    err.start()
    results = {}
    killed = threading.Event()

    def kill():
        killed.set()
        os.killpg(proc.pid, 9)

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("{"):
                sys.stderr.write("[%s stdout] %s\n" % (client, line))
                continue
            try:
                r = json.loads(line)
                results[r["scenario"]] = {"status": r["status"], "detail": str(r.get("detail", ""))[:500]}
            except (ValueError, KeyError) as e:
                sys.stderr.write("[%s] unreadable result line %r: %s\n" % (client, line, e))
        rc = proc.wait()
    finally:
        timer.cancel()
    err.join(10)
    if killed.is_set():
        return results, "driver killed after %d s" % timeout
    if rc != 0:
        return results, "driver exited with %d" % rc
    return results, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--broker", choices=["runnel", "kafka"], required=True)
    ap.add_argument("--runnel", default=os.path.join(REPO, "build", "release", "runnel"))
    ap.add_argument("--clients", default="", help="comma-separated; default: every client")
    ap.add_argument("--cache", default=os.path.join(REPO, "build", "matrix-cache"))
    ap.add_argument("--out", default="")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per driver")
    args = ap.parse_args()

    cache = os.path.abspath(args.cache)
    os.makedirs(cache, exist_ok=True)
    wanted = [c for c in args.clients.split(",") if c] or all_clients()
    ids = scenarios()
    merged = {}
    if args.out and os.path.exists(args.out):
        with open(args.out) as f:
            merged = json.load(f)

    failed = []
    for client in wanted:
        if not os.path.isfile(os.path.join(CLIENTS, client, "run")):
            sys.exit("no such client: %s" % client)
        t0 = time.monotonic()
        broker = start_broker(args.broker, args.runnel, cache)
        try:
            results, problem = run_client(client, broker.bootstrap, cache, args.timeout)
        finally:
            broker_log = broker.log_text()
            broker.close()
        for sid in ids:
            if sid not in results:
                results[sid] = {"status": "fail", "detail": problem or "driver reported nothing"}
        # A client bug that fails the same way on Apache Kafka is recorded
        # in about.json ("known_failures": {scenario: why}); it stays a
        # failure in the results, but is not Runnel's to fix.
        known = about(client).get("known_failures", {})
        bad = [sid for sid in ids if results[sid]["status"] == "fail" and sid not in known]
        for sid in known:
            if results.get(sid, {}).get("status") == "fail":
                results[sid]["detail"] = "known client bug (%s): %s" % (known[sid], results[sid]["detail"])
        for sid in ids:
            r = results[sid]
            print("%-20s %-24s %-11s %s" % (client, sid, r["status"], r["detail"][:120]), flush=True)
        if bad:
            failed += ["%s/%s" % (client, sid) for sid in bad]
            tail = broker_log[-20000:]
            sys.stderr.write("----- %s log tail (%s) -----\n%s\n----- end -----\n" % (args.broker, client, tail))
        merged[client] = {
            "title": about(client).get("title", client),
            "order": about(client).get("order", 1000),
            "broker": args.broker,
            "date": time.strftime("%Y-%m-%d"),
            "seconds": round(time.monotonic() - t0, 1),
            "scenarios": {sid: results[sid] for sid in ids},
        }
        if args.out:
            tmp = args.out + ".tmp"
            with open(tmp, "w") as f:
                json.dump(merged, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(tmp, args.out)
        print("%s on %s: %d of %d scenarios failed (%.0f s)" % (client, args.broker, len(bad), len(ids),
                                                               time.monotonic() - t0), flush=True)
    if failed:
        print("FAILED on %s: %s" % (args.broker, ", ".join(failed)), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
