#!/usr/bin/python3
"""`runnel produce` / `runnel consume` throughput beside kcat's (issue 17).

One fresh release Runnel; the same input file (N lines of `key<TAB>value`,
values of --size bytes) is produced by each tool into its own topic of
--partitions partitions, with the settings matched: keys split at the tab,
acks=all, idempotence on, no compression, linger.ms 5, batch size 1000000
bytes (librdkafka's batch.size default, which is the CLI's too). Then each
tool consumes its own topic from the beginning to the end (`-e`) with a
format that prints only the value. The tools take turns inside each round
(runnel, kcat, then again in the next round) and the medians are reported,
with runnel's records/s divided by kcat's.

Times are wall clock for the whole process (connect, metadata and, for
produce, the final flush included), input from a file and output to
/dev/null, so neither tool waits on a pipe.

usage: bench/cli_bench.py [--runnel build/release/runnel] [--records 1000000]
                          [--size 100] [--partitions 6] [--rounds 3]
                          [--out bench/results]
Prints a table; the raw numbers go to <out>/cli_bench-<date>.json.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
from runnel_harness import Runnel  # noqa: E402


def timed(cmd, stdin_path=None, timeout=600):
    with open(stdin_path or os.devnull, "rb") as inp, open(os.devnull, "wb") as out:
        start = time.monotonic()
        p = subprocess.run(cmd, stdin=inp, stdout=out, stderr=subprocess.PIPE, timeout=timeout)
        elapsed = time.monotonic() - start
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.decode()[-2000:]))
    return elapsed


def count_records(runnel, bootstrap, topic):
    out = subprocess.run([runnel, "consume", topic, "-b", bootstrap, "-e", "-f", "\\n"], capture_output=True,
                         timeout=600, check=True).stdout
    return len(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runnel", default=os.path.join(REPO, "build", "release", "runnel"))
    ap.add_argument("--records", type=int, default=1000000)
    ap.add_argument("--size", type=int, default=100, help="value bytes")
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    if not os.path.isdir(args.out):
        sys.exit("--out %s: no such directory" % args.out)

    tmp = tempfile.mkdtemp(prefix="cli-bench-")
    data = os.path.join(tmp, "input.txt")
    with open(data, "w") as f:
        for i in range(args.records):
            v = ("%d-" % i).ljust(args.size, "x")
            f.write("key-%d\t%s\n" % (i % 10000, v))
    input_bytes = os.path.getsize(data)
    payload_bytes = args.records * args.size

    runs = []
    with Runnel(binary=args.runnel, overrides={"auto.create.topics.enable": "false"}) as broker:
        b = broker.bootstrap
        R = args.runnel

        def create(topic):
            subprocess.run([R, "topic", "create", topic, "-b", b, "-p", str(args.partitions)], check=True,
                           capture_output=True, timeout=60)

        tools = {
            "runnel": {
                "produce": lambda t: [R, "produce", t, "-b", b, "-K", "\t", "-i", data, "-X", "linger.ms=5",
                                      "-X", "batch.size=1000000"],
                "consume": lambda t: [R, "consume", t, "-b", b, "-e", "-o", "beginning", "-f", "%s\\n"],
            },
            "kcat": {
                "produce": lambda t: ["kcat", "-b", b, "-X", "broker.address.family=v4", "-P", "-t", t, "-K", "\t",
                                      "-l", data, "-X", "acks=all", "-X", "enable.idempotence=true",
                                      "-X", "linger.ms=5", "-X", "batch.size=1000000"],
                "consume": lambda t: ["kcat", "-b", b, "-X", "broker.address.family=v4", "-C", "-t", t, "-e",
                                      "-o", "beginning", "-f", "%s\\n"],
            },
        }
        for rnd in range(args.rounds):
            for tool, cmds in tools.items():
                topic = "bench-cli-%s-%d" % (tool, rnd)
                create(topic)
                p = timed(cmds["produce"](topic))
                n = count_records(R, b, topic)
                if n != args.records:
                    raise RuntimeError("%s produced %d records of %d" % (tool, n, args.records))
                c = timed(cmds["consume"](topic))
                runs.append({"round": rnd, "tool": tool, "produce_s": p, "consume_s": c})
                print("round %d %-6s produce %.2f s, consume %.2f s" % (rnd, tool, p, c), flush=True)

    def med(tool, key):
        return statistics.median(r[key] for r in runs if r["tool"] == tool)

    rows = []
    for phase in ("produce", "consume"):
        ours, theirs = med("runnel", phase + "_s"), med("kcat", phase + "_s")
        rows.append({"phase": phase,
                     "runnel_records_per_s": args.records / ours, "kcat_records_per_s": args.records / theirs,
                     "runnel_mb_per_s": payload_bytes / ours / 1e6, "kcat_mb_per_s": payload_bytes / theirs / 1e6,
                     "ratio": theirs / ours})
    print("\n%d records of %d B values (%.1f MB of input), %d partitions, %d rounds, medians:" % (
        args.records, args.size, input_bytes / 1e6, args.partitions, args.rounds))
    print("%-8s %14s %10s %14s %10s %8s" % ("", "runnel rec/s", "MB/s", "kcat rec/s", "MB/s", "ratio"))
    for r in rows:
        print("%-8s %14.0f %10.1f %14.0f %10.1f %8.2f" % (r["phase"], r["runnel_records_per_s"], r["runnel_mb_per_s"],
                                                          r["kcat_records_per_s"], r["kcat_mb_per_s"], r["ratio"]))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H%M%SZ")
    path = os.path.join(args.out, "cli_bench-%s.json" % stamp)
    with open(path, "w") as f:
        json.dump({"records": args.records, "size": args.size, "partitions": args.partitions,
                   "load_average": os.getloadavg(), "runs": runs, "summary": rows}, f, indent=1)
    print("raw numbers: %s" % path)
    os.remove(data)
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
