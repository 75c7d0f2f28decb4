#!/usr/bin/python3
"""REST produce against the Kafka protocol on the same broker (issue 17).

One release Runnel (runnel.admin.listeners on loopback), one topic per path,
each with one partition, the same records: --records values of --size bytes,
in batches of --batch (100) records, acks=all (REST's produce is acks=all).

  v3     POST /v3/clusters/{id}/topics/{t}/records, --batch STRING records
         of concatenated JSON per request (what streaming mode sends);
  v2     POST /topics/{t}, application/vnd.kafka.binary.v2+json, --batch
         base64 records per request;
  kafka  kcat -P (librdkafka 2.0.2) with batch.num.messages=--batch,
         linger.ms=5, acks=all: the Kafka protocol path.

The REST bodies are built before the clock starts and sent by --connections
threads over keep-alive connections (http.client), so the client's own cost
is as small as Python allows; every answer is checked (--batch reports of
error_code 200, or offsets without an error), and every path's topic must
hold exactly --records records at the end. The paths take turns, --rounds
times; the table gives each round's records/s and MB/s (value bytes) and
the ratio of each REST path to kafka in the same round, and the broker's
CPU seconds (user + system, /proc) per million records on each path. The broker and the
client share the machine, so the numbers are the machine's, not the
broker's alone.

usage: bench/rest_bench.py [--runnel build/release/runnel] [--records 200000]
                           [--size 100] [--batch 100] [--connections 4] [--rounds 2]
The raw numbers go to bench/results/rest_bench-<date>.json.
"""
import argparse
import base64
import datetime
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "compat-tests"))
from runnel_harness import Runnel  # noqa: E402
from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


def values(n, size):
    return [("%010d" % i).encode().ljust(size, b"v") for i in range(n)]


def v3_bodies(vals, batch):
    out = []
    for i in range(0, len(vals), batch):
        out.append("".join(json.dumps({"value": {"type": "STRING", "data": v.decode()}})
                           for v in vals[i:i + batch]).encode())
    return out


def v2_bodies(vals, batch):
    out = []
    for i in range(0, len(vals), batch):
        out.append(json.dumps({"records": [{"value": base64.b64encode(v).decode()}
                                           for v in vals[i:i + batch]]}).encode())
    return out


def post_all(port, path, content_type, bodies, connections, check):
    """Sends every body over `connections` keep-alive connections; seconds taken."""
    errors = []
    lock = threading.Lock()
    queue = list(reversed(bodies))

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            while True:
                with lock:
                    if not queue or errors:
                        return
                    body = queue.pop()
                conn.request("POST", path, body=body, headers={"Content-Type": content_type})
                r = conn.getresponse()
                answer = r.read()
                problem = check(r.status, answer)
                if problem:
                    with lock:
                        errors.append(problem)
                    return
        except Exception as e:  # noqa: BLE001 - reported below
            with lock:
                errors.append(repr(e))
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - start
    if errors:
        raise RuntimeError("%s: %s" % (path, errors[0]))
    return took


def cpu_seconds(pid):
    """User plus system CPU time the process has used."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def end_offset(bootstrap, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "rest-bench"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)[1]
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runnel", default=os.path.join(HERE, "..", "build", "release", "runnel"))
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    vals = values(args.records, args.size)
    v3 = v3_bodies(vals, args.batch)
    v2 = v2_bodies(vals, args.batch)
    mb = args.records * args.size / 1e6
    want_reports = args.batch

    def v3_ok(status, answer):
        if status != 200 or answer.count(b'"error_code":200') != want_reports:
            return "v3 answered %d: %r" % (status, answer[:200])
        return None

    def v2_ok(status, answer):
        if status != 200 or b'"error_code":null' not in answer or b'"error_code":1' in answer \
                or b'"error_code":2' in answer:
            return "v2 answered %d: %r" % (status, answer[:200])
        return None

    tmp = tempfile.mkdtemp(prefix="rest-bench-")
    lines = os.path.join(tmp, "values")
    with open(lines, "wb") as f:
        f.write(b"\n".join(vals) + b"\n")
    rows = []
    with Runnel(binary=args.runnel, overrides={"runnel.admin.listeners": "http://127.0.0.1:0",
                                               "auto.create.topics.enable": "false"}) as broker:
        port = broker.admin_port()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/v3/clusters")
        cluster = json.loads(conn.getresponse().read())["data"][0]["cluster_id"]
        conn.close()
        for rnd in range(args.rounds):
            topics = {p: "rest-bench-%s-%d" % (p, rnd) for p in ("v3", "v2", "kafka")}
            for f in admin.create_topics([NewTopic(t, 1, 1) for t in topics.values()]).values():
                f.result(timeout=30)
            took, cpu = {}, {}
            pid = broker.proc.pid
            before = cpu_seconds(pid)
            took["v3"] = post_all(port, "/v3/clusters/%s/topics/%s/records" % (cluster, topics["v3"]),
                                  "application/json", v3, args.connections, v3_ok)
            cpu["v3"], before = cpu_seconds(pid) - before, cpu_seconds(pid)
            took["v2"] = post_all(port, "/topics/%s" % topics["v2"], "application/vnd.kafka.binary.v2+json",
                                  v2, args.connections, v2_ok)
            cpu["v2"], before = cpu_seconds(pid) - before, cpu_seconds(pid)
            start = time.monotonic()
            subprocess.run(["kcat", "-P", "-q", "-b", broker.bootstrap, "-t", topics["kafka"], "-p", "0",
                            "-X", "acks=all", "-X", "batch.num.messages=%d" % args.batch, "-X", "linger.ms=5",
                            "-l", lines], check=True, timeout=600)
            took["kafka"] = time.monotonic() - start
            cpu["kafka"] = cpu_seconds(pid) - before
            for p, t in topics.items():
                end = end_offset(broker.bootstrap, t)
                if end != args.records:
                    raise RuntimeError("%s holds %d records, not %d" % (t, end, args.records))
            row = {"round": rnd + 1}
            for p in ("v3", "v2", "kafka"):
                row[p] = {"seconds": round(took[p], 3), "records_per_s": round(args.records / took[p]),
                          "mb_per_s": round(mb / took[p], 2),
                          "broker_cpu_s_per_million": round(cpu[p] * 1e6 / args.records, 2)}
            for p in ("v3", "v2"):
                row[p]["ratio_to_kafka"] = round(took["kafka"] / took[p], 3)
            rows.append(row)
            print("round %d: " % (rnd + 1) + "  ".join(
                "%s %d rec/s %.1f MB/s%s" % (p, row[p]["records_per_s"], row[p]["mb_per_s"],
                                             " (%.2fx kafka)" % row[p]["ratio_to_kafka"] if p != "kafka" else "")
                for p in ("v3", "v2", "kafka")), flush=True)
        del admin  # its connections close before the broker stops
    print()
    print("| round | path | records/s | MB/s | / kafka | broker CPU s per 1M records |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        for p in ("v3", "v2", "kafka"):
            print("| %d | %s | %d | %.1f | %s | %.2f |" % (
                r["round"], p, r[p]["records_per_s"], r[p]["mb_per_s"],
                "%.2f" % r[p]["ratio_to_kafka"] if p != "kafka" else "1", r[p]["broker_cpu_s_per_million"]))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    out = os.path.join(HERE, "results", "rest_bench-%s.json" % datetime.date.today().isoformat())
    with open(out, "w") as f:
        json.dump({"args": vars(args), "load_average": os.getloadavg(), "rounds": rows}, f, indent=1)
    print("\nraw numbers: %s" % os.path.relpath(out))


if __name__ == "__main__":
    main()
