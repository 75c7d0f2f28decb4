#!/usr/bin/python3
"""REST consume against the Kafka protocol on the same broker (issue 17).

One release Runnel (runnel.admin.listeners on loopback), one single-partition
topic of --records values of --size bytes (produced once with kcat), read
whole from the beginning, --rounds times, by each path in turn:

  v2     a REST Proxy v2 consumer instance (binary format, partition
         assigned by hand, no group), GET .../records with
         fetch.min.bytes=--min-bytes (a read answers once more than that
         came) over one keep-alive connection, each answer's base64 values
         decoded and checked;
  kafka  kcat -C -e (librdkafka 2.0.2) from the beginning to the end of the
         same partition: the Kafka protocol path, through a C client.

The table gives each round's records/s and MB/s (value bytes), the ratio of
v2 to kafka in the same round, and the broker's CPU seconds (user + system,
/proc) per million records. The broker and the client share the machine:
the v2 path's own cost is mostly the Python client decoding JSON and base64.

usage: bench/rest_consume_bench.py [--runnel build/release/runnel] [--records 200000]
                                   [--size 100] [--min-bytes 1000000] [--rounds 2]
The raw numbers go to bench/results/rest_consume_bench-<date>.json.
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
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "compat-tests"))
from runnel_harness import Runnel  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

TOPIC = "rest-consume-bench"


def cpu_seconds(pid):
    """User plus system CPU time the process has used."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def call(conn, method, path, body=None, accept=None):
    headers = {"Content-Type": "application/vnd.kafka.v2+json"}
    if accept:
        headers["Accept"] = accept
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    r = conn.getresponse()
    data = r.read()
    if r.status not in (200, 204):
        raise RuntimeError("%s %s answered %d: %r" % (method, path, r.status, data[:300]))
    return data


def rest_read(port, records, size, min_bytes, rnd):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    group = "rest-consume-bench-%d" % rnd
    call(conn, "POST", "/consumers/" + group, {"name": "c", "auto.offset.reset": "earliest",
                                               "auto.commit.enable": "false", "fetch.min.bytes": str(min_bytes)})
    inst = "/consumers/%s/instances/c" % group
    call(conn, "POST", inst + "/assignments", {"partitions": [{"topic": TOPIC, "partition": 0}]})
    start = time.monotonic()
    seen = 0
    while seen < records:
        batch = json.loads(call(conn, "GET", inst + "/records?timeout=1000",
                                accept="application/vnd.kafka.binary.v2+json"))
        for rec in batch:
            if rec["offset"] != seen or len(base64.b64decode(rec["value"])) != size:
                raise RuntimeError("v2 read offset %d (%r) where %d was due" % (rec["offset"], rec["value"][:20], seen))
            seen += 1
    took = time.monotonic() - start
    call(conn, "DELETE", inst)
    conn.close()
    return took


def kafka_read(bootstrap, records, size):
    """kcat -C (librdkafka 2.0.2, C) reads the partition from the beginning to its end."""
    start = time.monotonic()
    out = subprocess.run(["kcat", "-C", "-q", "-b", bootstrap, "-t", TOPIC, "-p", "0", "-o", "beginning", "-e",
                          "-f", "%o %S\n"], check=True, capture_output=True, timeout=600).stdout
    took = time.monotonic() - start
    lines = out.split(b"\n")[:-1]
    if len(lines) != records or lines[-1] != b"%d %d" % (records - 1, size):
        raise RuntimeError("kcat read %d records, the last %r" % (len(lines), lines[-1:]))
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runnel", default=os.path.join(HERE, "..", "build", "release", "runnel"))
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--min-bytes", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    mb = args.records * args.size / 1e6
    tmp = tempfile.mkdtemp(prefix="rest-consume-bench-")
    lines = os.path.join(tmp, "values")
    with open(lines, "wb") as f:
        f.write(b"\n".join(("%010d" % i).encode().ljust(args.size, b"v") for i in range(args.records)) + b"\n")
    rows = []
    with Runnel(binary=args.runnel, overrides={"runnel.admin.listeners": "http://127.0.0.1:0"}) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(timeout=30)
        subprocess.run(["kcat", "-P", "-q", "-b", broker.bootstrap, "-t", TOPIC, "-p", "0", "-l", lines],
                       check=True, timeout=600)
        pid = broker.proc.pid
        for rnd in range(args.rounds):
            took, cpu = {}, {}
            before = cpu_seconds(pid)
            took["v2"] = rest_read(broker.admin_port(), args.records, args.size, args.min_bytes, rnd)
            cpu["v2"], before = cpu_seconds(pid) - before, cpu_seconds(pid)
            took["kafka"] = kafka_read(broker.bootstrap, args.records, args.size)
            cpu["kafka"] = cpu_seconds(pid) - before
            row = {"round": rnd + 1}
            for p in ("v2", "kafka"):
                row[p] = {"seconds": round(took[p], 3), "records_per_s": round(args.records / took[p]),
                          "mb_per_s": round(mb / took[p], 2),
                          "broker_cpu_s_per_million": round(cpu[p] * 1e6 / args.records, 2)}
            row["v2"]["ratio_to_kafka"] = round(took["kafka"] / took["v2"], 3)
            rows.append(row)
            print("round %d: v2 %d rec/s %.1f MB/s (%.2fx kafka)  kafka %d rec/s %.1f MB/s" % (
                rnd + 1, row["v2"]["records_per_s"], row["v2"]["mb_per_s"], row["v2"]["ratio_to_kafka"],
                row["kafka"]["records_per_s"], row["kafka"]["mb_per_s"]), flush=True)
        del admin
    print()
    print("| round | path | records/s | MB/s | / kafka | broker CPU s per 1M records |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        for p in ("v2", "kafka"):
            r = row[p]
            print("| %d | %s | {:,} | %.1f | %s | %.2f |".format(r["records_per_s"]) % (
                row["round"], p, r["mb_per_s"], r.get("ratio_to_kafka", 1), r["broker_cpu_s_per_million"]))
    out = os.path.join(HERE, "results", "rest_consume_bench-%s.json" % datetime.date.today().isoformat())
    with open(out, "w") as f:
        json.dump({"records": args.records, "size": args.size, "min_bytes": args.min_bytes,
                   "load_average": os.getloadavg(), "rounds": rows}, f, indent=1)
        f.write("\n")
    print("\nwrote " + os.path.relpath(out))


if __name__ == "__main__":
    main()
