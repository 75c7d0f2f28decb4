#!/usr/bin/python3
"""Failing I/O on one log dir of two (JBOD), injected into a real Runnel
process by the io_faults shim (faults/io_faults.cc, LD_PRELOADed): from a
seeded point on, one kind of call on the files under the second log dir
fails with EIO or ENOSPC, as a failing disk's would. (The first holds the
single node's metadata, as Kafka's metadata.log.dir defaults to it.)

Each case, on a fresh broker with log.dirs=A,B (B failing) and a topic
whose partitions are spread over both:
- records produced with acks=all (runnel.acks.all.fsync=true, the
  default) to every partition, one per partition per round, until the
  partitions on B answer KAFKA_STORAGE_ERROR; an append whose write or
  fsync failed is never acknowledged;
- B is offline as Kafka takes a failed dir offline, and the broker's log
  says so in Kafka's words: its partitions have no leader (Metadata
  LEADER_NOT_AVAILABLE, the replica offline), Fetch and ListOffsets there
  answer KAFKA_STORAGE_ERROR, DescribeLogDirs gives B KAFKA_STORAGE_ERROR;
  A keeps serving: its partitions acknowledge and read, in the same
  Produce requests as B's failures, and a topic created now lands on A;
- the broker is SIGKILLed and started again without the shim (the disk
  replaced): every partition is back, every acknowledged record is read
  back once and in order, and every .log file parses to its end with its
  .index and .timeindex agreeing with it (cluster_harness.index_problems).

The seed (argument 3, default 1) draws how many matching calls pass
before the first failure; it is printed, so a failure can be rerun.

usage: /usr/bin/python3 io_faults_test.py <runnel binary> <io_faults.so> [seed]
"""

import os
import random
import sys
import time

import kafka_wire as w
import storage_faults_test
from admin_test import Raw
from cluster_harness import index_problems, log_batches
from runnel_harness import Runnel, preloaded, run_tests

NONE = 0
LEADER_NOT_AVAILABLE = 5
KAFKA_STORAGE_ERROR = 56
TOPIC = "jbod"
PARTITIONS = 4


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def create_topic(c, corr, name, partitions, configs=()):
    err, msg = storage_faults_test.create_topic(c, corr, name, partitions, configs)
    check(err == NONE, "CreateTopics %s: %d %s" % (name, err, msg))


def placement(dirs, topic, partitions):
    """{partition: index of the log dir holding it}."""
    out = {}
    for i, d in enumerate(dirs):
        for p in range(partitions):
            if os.path.isdir(os.path.join(d, "%s-%d" % (topic, p))):
                out[p] = i
    check(len(out) == partitions, "partitions of %s found in the log dirs: %r" % (topic, out))
    return out


def produce_round(c, corr, rnd, acked, errors):
    """One acks=all Produce of one record to every partition; -> {p: error}."""
    batches = {}
    for p in range(PARTITIONS):
        value = b"p%d-round-%05d-" % (p, rnd) + b"x" * 600
        batches[p] = w.record_batch([(b"k%d" % rnd, value, [])], int(time.time() * 1000))
    answer = w.parse_produce_v8(c.call(w.produce_v8(corr, -1, {TOPIC: list(batches.items())}), corr))
    out = {}
    for (topic, p), (err, base, _) in answer.items():
        out[p] = err
        if err == NONE:
            acked.setdefault(p, []).append((base, b"p%d-round-%05d-" % (p, rnd)))
        else:
            errors.setdefault(p, set()).add(err)
    return out


def check_files(d):
    """Every .log parses to its end (or its preallocated zero tail) and its
    indexes agree with it."""
    files = {}
    for name in sorted(os.listdir(d)):
        if name.endswith((".log", ".index", ".timeindex")):
            with open(os.path.join(d, name), "rb") as f:
                files[name] = f.read()
    for name, data in files.items():
        if not name.endswith(".log"):
            continue
        batches = log_batches(data)
        end = batches[-1][0] + 12 + w.batch_header(data[batches[-1][0]:batches[-1][0] + 61])["length"] if batches else 0
        check(not data[end:].strip(b"\0"), "%s/%s: %d bytes after its last whole batch are not zeros" % (
            d, name, len(data) - end))
    problems = index_problems(files)
    check(not problems, "%s: %s" % (d, "; ".join(problems[:3])))


def run_case(binary, shim, calls, errno_name, seed, topic_configs=()):
    rng = random.Random("%s/%s/%d" % (calls, errno_name, seed))
    skip = rng.randrange(0, 12)
    print("  %s %s, seed %d: %d matching calls pass first" % (calls, errno_name, seed, skip), flush=True)
    b = Runnel(binary)
    dirs = [os.path.join(b.tmp, "disk-a"), os.path.join(b.tmp, "disk-b")]
    arm = os.path.join(b.tmp, "arm")
    fault_log = os.path.join(b.tmp, "faults.log")
    b.overrides["log.dirs"] = ",".join(dirs)
    b.env = preloaded(shim, RUNNEL_IO_FAULT_DIR=dirs[1], RUNNEL_IO_FAULT_CALLS=calls,
                      RUNNEL_IO_FAULT_ERRNO=errno_name, RUNNEL_IO_FAULT_ARM=arm,
                      RUNNEL_IO_FAULT_SKIP=str(skip), RUNNEL_IO_FAULT_LOG=fault_log)
    acked, errors = {}, {}
    try:
        b.start()
        with w.Connection(b.port, timeout=60) as c:
            create_topic(c, 1, TOPIC, PARTITIONS, topic_configs)
            where = placement(dirs, TOPIC, PARTITIONS)
            failing = sorted(p for p, i in where.items() if i == 1)
            healthy = sorted(p for p, i in where.items() if i == 0)
            check(failing and healthy, "the partitions are not spread over both dirs: %r" % where)
            for rnd in range(5):
                got = produce_round(c, 100 + rnd, rnd, acked, errors)
                check(all(e == NONE for e in got.values()), "before the fault: %r" % got)
            open(arm, "w").close()
            rnd, deadline = 5, time.monotonic() + 60
            while time.monotonic() < deadline:
                got = produce_round(c, 100 + rnd, rnd, acked, errors)
                rnd += 1
                for p in healthy:
                    check(got[p] == NONE, "partition %d on the healthy dir: error %d" % (p, got[p]))
                if all(got[p] == KAFKA_STORAGE_ERROR for p in failing):
                    break
                # rename and open fail on a roll or a checkpoint, not on every append
                time.sleep(0.05)
            check(all(errors.get(p) == {KAFKA_STORAGE_ERROR} for p in failing),
                  "partitions %r on the failed dir: errors %r after %d rounds" % (failing, errors, rnd))
            check(not any(errors.get(p) for p in healthy), "partitions on the healthy dir failed: %r" % errors)
            with open(fault_log) as f:
                fired = f.read().splitlines()
            check(fired and all(line.startswith(calls.split(",")[0]) or line.split("\t")[0] in calls.split(",")
                                for line in fired), "the shim's failures: %r" % fired[:3])
            for p in failing:
                for corr, frame, parse in ((9001, w.list_offsets_v1(9001, TOPIC, [p]), w.parse_list_offsets_v1),
                                           (9002, w.fetch_v4(9002, TOPIC, p, 0), w.parse_fetch_v4)):
                    [answer] = parse(c.call(frame, corr)).values()
                    check(answer[0] == KAFKA_STORAGE_ERROR, "request %d to offline partition %d: %r" % (
                        corr, p, answer[:2]))
            # The healthy dir goes on: appends, reads and new topics.
            for i in range(3):
                got = produce_round(c, 20000 + i, 20000 + i, acked, errors)
                check(all(got[p] == NONE for p in healthy), "the healthy dir after the fault: %r" % got)
            create_topic(c, 30000, "after-fault", 2)
            check(placement(dirs, "after-fault", 2) == {0: 0, 1: 0}, "a topic created after the fault: %r" %
                  placement(dirs, "after-fault", 2))
        raw = Raw(b.port)
        meta = raw.call(3, 8, {"topics": [{"name": TOPIC}], "allow_auto_topic_creation": False,
                               "include_cluster_authorized_operations": False,
                               "include_topic_authorized_operations": False})
        for part in meta["topics"][0]["partitions"]:
            p = part["partition_index"]
            want = (LEADER_NOT_AVAILABLE, -1, [1]) if p in failing else (NONE, 1, [])
            got = (part["error_code"], part["leader_id"], part["offline_replicas"])
            check(got == want, "Metadata of partition %d: %r, expected %r" % (p, got, want))
        results = {r["log_dir"]: r for r in raw.call(35, 1, {"topics": None})["results"]}
        check(results[dirs[1]]["error_code"] == KAFKA_STORAGE_ERROR and results[dirs[1]]["topics"] == [],
              "DescribeLogDirs of the failed dir: %r" % results[dirs[1]])
        check(results[dirs[0]]["error_code"] == NONE, "DescribeLogDirs of the healthy dir: %r" % results[dirs[0]])
        check(b.alive(), "the broker died")
        with open(b.log_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        check("Stopping serving logs in dir %s" % dirs[1] in text, "the broker's log does not name the failed dir")

        b.kill9()
        b.env = {}
        b.start()
        total = 0
        for p in range(PARTITIONS):
            stored = w.read_batches(b.port, TOPIC, p)
            offsets = [o for o, _ in stored]
            check(offsets == sorted(set(offsets)), "partition %d: offsets out of order or repeated" % p)
            by_offset = dict(stored)
            for base, prefix in acked.get(p, []):
                check(base in by_offset and prefix in by_offset[base],
                      "partition %d: acknowledged record %r (offset %d) lost" % (p, prefix, base))
                copies = sum(1 for _, batch in stored if prefix in batch)
                check(copies == 1, "partition %d holds %r %d times" % (p, prefix, copies))
            total += len(acked.get(p, []))
        for d in dirs:
            for name in os.listdir(d):
                if os.path.isdir(os.path.join(d, name)) and name.startswith(TOPIC + "-"):
                    check_files(os.path.join(d, name))
        with w.Connection(b.port) as c:
            got = produce_round(c, 40000, 40000, acked, errors)
            check(all(e == NONE for e in got.values()), "after the restart: %r" % got)
        print("    %d acknowledged, all read back; %d injected failures" % (total, len(fired)), flush=True)
    except Exception:
        b._dump()
        raise
    finally:
        b.close()


CASES = [
    # (calls, errno, topic configs)
    ("fdatasync", "EIO", ()),
    ("pwrite", "ENOSPC", ()),
    ("pwrite", "EIO", (("index.interval.bytes", "0"),)),
    ("open", "EIO", (("segment.bytes", "16384"),)),
    ("ftruncate,fallocate", "ENOSPC", (("segment.bytes", "16384"), ("preallocate", "true"))),
    ("rename,fsync", "EIO", (("segment.bytes", "16384"), ("retention.bytes", "40000"))),
]


def main():
    binary, shim = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    return run_tests([("%s %s" % (calls, err), lambda calls=calls, err=err, cfg=cfg:
                       run_case(binary, shim, calls, err, seed, cfg)) for calls, err, cfg in CASES])


if __name__ == "__main__":
    sys.exit(main())
