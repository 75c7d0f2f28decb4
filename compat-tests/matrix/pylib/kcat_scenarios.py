"""The matrix scenarios through kcat (Debian's kcat 1.7.1 on its own
librdkafka): produce with -P (-K keys, -H headers, -Z nulls, -X acks,
compression, idempotence, a transaction per run with -X transactional.id),
consume with -C (-o beginning/end/s@ts, -e, -J, -X isolation.level),
-Q for offsets by timestamp, -L -J for metadata and -G for groups. kcat
has no admin API, so the admin scenarios are unsupported; the one group
scenario that needs a 6-partition topic gets it from librdkafka's
AdminClient (Debian's python3-confluent-kafka) as a fixture, since kcat
can only auto-create topics with the broker's num.partitions.
"""

import json
import os
import re
import signal
import subprocess
import threading
import time
import zlib

import librdkafka_security
from matrix_driver import SECURITY_COLUMNS, Unsupported, feed_through_failover, log, wait_until

N = 100
NO_ADMIN = "kcat has no admin API (it cannot %s)"


def kcat_args(ctx, *args):
    security = []  # a security column's librdkafka settings, as -X options
    for k, v in librdkafka_security.config(ctx.security or {}).items():
        security += ["-X", "%s=%s" % (k, v)]
    return ["kcat", "-b", ctx.bootstrap, "-X", "broker.address.family=v4", "-m", "15"] + security + list(args)


def kcat(ctx, *args, input=None, timeout=60):
    p = subprocess.run(kcat_args(ctx, *args), input=input, capture_output=True, timeout=timeout)
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        raise AssertionError("kcat %s exited %d: %s" % (" ".join(args), p.returncode, err.strip()[-300:]))
    # librdkafka's own log lines (%N|...) include retried warnings; kcat's
    # failures are its "% ERROR" lines and failed delivery reports.
    if re.search(r"^% ERROR|Delivery failed", err, re.M):
        raise AssertionError("kcat %s: %s" % (" ".join(args), err.strip()[-300:]))
    return p.stdout


def produce(ctx, topic, lines, *extra, partition=0):
    """lines: byte strings, one record each (key\\tvalue with -K '\\t')."""
    kcat(ctx, "-P", "-t", topic, "-p", str(partition), *extra, input=b"".join(l + b"\n" for l in lines))


def consume(ctx, topic, *extra, partition=0):
    out = kcat(ctx, "-C", "-t", topic, "-p", str(partition), "-e", "-J", *extra)
    return [json.loads(l) for l in out.decode().splitlines() if l.strip()]


def values(n, tag):
    return [("%s value %d " % (tag, i)) + "x" * (i % 40) for i in range(n)]


class Background:
    """A long-running kcat whose stdout JSON records and stderr lines are collected by threads."""

    def __init__(self, ctx, *args):
        self.proc = subprocess.Popen(kcat_args(ctx, *args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.records, self.errors = [], []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, args=(self.proc.stdout, True), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, False), daemon=True).start()

    def _read(self, stream, is_stdout):
        for raw in stream:
            line = raw.decode("utf-8", "replace").strip()
            if not line:
                continue
            with self.lock:
                if is_stdout:
                    self.records.append(json.loads(line))
                else:
                    self.errors.append(line)

    def snapshot(self):
        with self.lock:
            return list(self.records), list(self.errors)

    def assignment(self):
        """Partitions of the last "assigned:" rebalance line kcat -G printed (empty after a revoke)."""
        parts = set()
        for line in self.snapshot()[1]:
            if "rebalanced" in line:
                parts = set(int(p) for p in re.findall(r"\[(\d+)\]", line.split("assigned:", 1)[1])) \
                    if "assigned:" in line else set()
        return parts

    def stop(self):
        """SIGTERM: kcat closes its consumer (leaves the group, commits)."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
                raise AssertionError("kcat did not exit within 20 s of SIGTERM")
        return self.proc.returncode


# -- scenarios ---------------------------------------------------------------

def metadata(ctx):
    topic = ctx.name()
    produce(ctx, topic, [b"x"])  # kcat cannot create a topic: auto-created with num.partitions=1
    md = json.loads(kcat(ctx, "-L", "-J"))
    listed = {b["id"]: b["name"] for b in md["brokers"]}
    assert listed == {i: "%s:%d" % a for i, a in ctx.brokers.items()}, md["brokers"]
    topics = {t["topic"]: t for t in md["topics"]}
    assert topic in topics, "topic %s not listed" % topic
    parts = topics[topic]["partitions"]
    assert [p["partition"] for p in parts] == [0], parts
    p = parts[0]
    ids = sorted(ctx.brokers)
    # auto-created with default.replication.factor: 1 on one broker, 3 in a cluster
    assert p["leader"] in ids and sorted(r["id"] for r in p["replicas"]) == ids, p
    return "brokers %s, auto-created topic with 1 partition on all of them" % ids


def produce_acks(acks):
    def scenario(ctx):
        topic = ctx.name()
        vals = values(N, topic)
        produce(ctx, topic, [v.encode() for v in vals], "-X", "acks=%s" % acks)
        got = consume(ctx, topic)
        assert [r["payload"] for r in got] == vals, "values differ"
        assert [r["offset"] for r in got] == list(range(N))
        return "%d records" % N
    return scenario


def keys_headers_timestamps(ctx):
    topic = ctx.name()
    lines, want = [], []
    for i in range(20):
        key = None if i % 5 == 3 else "key-%d" % i
        value = None if i % 7 == 2 else "value-%d" % i
        lines.append((value or "").encode() if key is None else ("%s\t%s" % (key, value or "")).encode())
        want.append((key, value))
    headers = [("h", "one"), ("x", "1"), ("h", "two"), ("empty", "")]
    args = ["-K", "\t", "-Z"]
    for k, v in headers:
        args += ["-H", "%s=%s" % (k, v)]
    before = int(time.time() * 1000)
    produce(ctx, topic, lines, *args)
    after = int(time.time() * 1000)
    got = consume(ctx, topic)
    assert len(got) == len(want), "%d records back" % len(got)
    flat = [x for h in headers for x in h]
    for i, (r, (key, value)) in enumerate(zip(got, want)):
        assert r["key"] == key, "record %d key %r != %r" % (i, r["key"], key)
        assert r["payload"] == value, "record %d value %r != %r" % (i, r["payload"], value)
        assert r.get("headers") == flat, "record %d headers %r" % (i, r.get("headers"))
        assert r["tstype"] == "create" and before - 1000 <= r["ts"] <= after + 1000, "record %d ts %s %s" % (
            i, r["tstype"], r["ts"])
    return "keys, repeated headers, null keys/values exact; create timestamps are kcat's own (-P cannot set one)"


def compression(codec):
    def scenario(ctx):
        topic = ctx.name()
        vals = [v * 20 for v in values(N, topic)]
        produce(ctx, topic, [v.encode() for v in vals], "-X", "compression.codec=%s" % codec, "-X", "linger.ms=50")
        got = consume(ctx, topic)
        assert [r["payload"] for r in got] == vals, "values differ"
        assert [r["offset"] for r in got] == list(range(N))
    return scenario


def idempotent_produce(ctx):
    topic = ctx.name()
    vals = values(N * 5, topic)
    produce(ctx, topic, [v.encode() for v in vals], "-X", "enable.idempotence=true", "-X", "batch.num.messages=10")
    got = consume(ctx, topic)
    assert [r["payload"] for r in got] == vals, "values differ (duplicates or reorder)"
    assert [r["offset"] for r in got] == list(range(len(vals)))


# -- transactions: one kcat -P run is one transaction (-X transactional.id):
# init and begin at start, committed at the end of its input, aborted on
# SIGTERM. kcat has no per-record partition, so keys pick the partition
# (librdkafka's consistent partitioner: CRC-32 of the key modulo the count).

# kcat 1.7.1 reads stdin in blocks of this many bytes (found by trying:
# 16 lines of 64 bytes are produced at once, 15 not until more input comes).
KCAT_BLOCK = 1024


def key_for(i, partition, partitions):
    """A key that the consistent partitioner puts on `partition`."""
    j = 0
    while zlib.crc32(b"k%d-%d" % (i, j)) % partitions != partition:
        j += 1
    return b"k%d-%d" % (i, j)


def txn_lines(vals, partitions=2):
    """vals round-robin over the partitions, as key\tvalue input lines."""
    return b"".join(key_for(i, i % partitions, partitions) + b"\t" + v.encode() + b"\n" for i, v in enumerate(vals))


def txn_args(topic, txn_id):
    return ["-P", "-t", topic, "-K", "\t", "-X", "partitioner=consistent", "-X", "transactional.id=%s" % txn_id,
            "-X", "acks=all", "-X", "enable.idempotence=true"]


def end_offset(ctx, topic, partition):
    out = kcat(ctx, "-Q", "-t", "%s:%d:-1" % (topic, partition)).decode()  # timestamp -1: the end
    m = re.search(r"\[%d\] offset (-?\d+)" % partition, out)
    assert m, "kcat -Q: %r" % out
    return int(m.group(1))


def read_isolated(ctx, topic, partition, isolation):
    return [r["payload"] for r in consume(ctx, topic, "-X", "isolation.level=" + isolation, partition=partition)]


def transactions(ctx):
    topic, txn_id = ctx.name(), ctx.name("txn-id")
    create_topic_fixture(ctx, topic, 2)
    first, aborted, second = values(10, "commit1"), values(6, "abort"), values(8, "commit2")
    kcat(ctx, *txn_args(topic, txn_id), input=txn_lines(first))
    # The aborted transaction: its records in the log (read_uncommitted sees
    # them) before SIGTERM, on which kcat aborts. kcat reads its input in
    # blocks of KCAT_BLOCK bytes and produces a block's lines once it is
    # full: the last value is padded so that the input fills whole blocks
    # (with a partial line left, SIGTERM makes kcat produce it and exit
    # without aborting: "Program terminated while producing message").
    short = len(txn_lines(aborted)) % KCAT_BLOCK
    if short:
        aborted[-1] += "x" * (KCAT_BLOCK - short)
    p = subprocess.Popen(kcat_args(ctx, *txn_args(topic, txn_id)), stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        p.stdin.write(txn_lines(aborted))
        p.stdin.flush()
        for part in range(2):
            wait_until("the records to abort in partition %d" % part, lambda: read_isolated(
                ctx, topic, part, "read_uncommitted")[-3:] == aborted[part::2][-3:], timeout=20)
        os.kill(p.pid, signal.SIGTERM)
        err = p.communicate(timeout=30)[1].decode("utf-8", "replace")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert "Aborting transaction" in err, "kcat on SIGTERM: %s" % err.strip()[-300:]
    kcat(ctx, *txn_args(topic, txn_id), input=txn_lines(second))

    for part in range(2):
        want = first[part::2] + second[part::2]
        got = read_isolated(ctx, topic, part, "read_committed")
        assert got == want, "read_committed partition %d: %d values, want %d" % (part, len(got), len(want))
        want_all = first[part::2] + aborted[part::2] + second[part::2]
        got = read_isolated(ctx, topic, part, "read_uncommitted")
        assert got == want_all, "read_uncommitted partition %d: %d values, want %d" % (part, len(got), len(want_all))
        end = end_offset(ctx, topic, part)
        assert end == len(want_all) + 3, "partition %d end offset %d, want %d records + 3 markers" % (
            part, end, len(want_all))

    # Fencing: the first kcat inits and begins, then a second with the same
    # transactional.id runs a transaction; the first's record comes after.
    first_run = subprocess.Popen(kcat_args(ctx, *txn_args(topic, txn_id)), stdin=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
    try:
        time.sleep(2)  # kcat says nothing once init_transactions() returned; it takes ms on loopback
        kcat(ctx, *txn_args(topic, txn_id), input=txn_lines(["after-fence"], 1).replace(b"k0-0", b"k-a"))
        out, err = first_run.communicate(txn_lines(["fenced"]), timeout=30)
    finally:
        if first_run.poll() is None:
            first_run.kill()
            first_run.wait()
    err = err.decode("utf-8", "replace")
    assert first_run.returncode != 0, "the fenced kcat's transaction committed: %s" % err.strip()[-300:]
    assert re.search(r"fenced|old epoch", err), "fenced kcat failed otherwise: %s" % err.strip()[-300:]
    fenced = re.search(r"% ERROR: [^\n]*", err) or re.search(r"[^\n]*(fenced|old epoch)[^\n]*", err)
    assert read_isolated(ctx, topic, 0, "read_committed")[-1:] == ["after-fence"] or \
        read_isolated(ctx, topic, 1, "read_committed")[-1:] == ["after-fence"], "the second's record is not committed"
    return ("a kcat -P -X transactional.id run per txn: commit 10, abort 6 (SIGTERM, once in the log), commit 8 "
            "on 2 partitions (keys pick them): read_committed 18, read_uncommitted 24, end offsets +3 markers; a 2nd "
            "kcat with the id fenced the first (exit %d: %s); it committed"
            % (first_run.returncode, fenced.group(0).split(": ")[-1].strip()[:80]))


def group_consume(ctx, topic, group, count, reset="earliest"):
    out = kcat(ctx, "-G", group, "-X", "auto.offset.reset=%s" % reset, "-c", str(count), "-J", topic, timeout=60)
    return [json.loads(l) for l in out.decode().splitlines() if l.strip()]


def consume_earliest(ctx):
    topic = ctx.name()
    vals = values(10, topic)
    produce(ctx, topic, [v.encode() for v in vals])
    got = group_consume(ctx, topic, ctx.name("g"), len(vals))
    assert [r["payload"] for r in got] == vals
    assert got[0]["offset"] == 0


def consume_latest(ctx):
    topic = ctx.name()
    produce(ctx, topic, [b"before %d" % i for i in range(5)])
    c = Background(ctx, "-C", "-t", topic, "-p", "0", "-o", "end", "-J", "-u")
    try:
        # Positioned once a marker produced now comes back; markers until one does.
        deadline = time.monotonic() + 20
        k = 0
        while not any(r["payload"].startswith("marker") for r in c.snapshot()[0]):
            assert time.monotonic() < deadline, "no marker consumed in 20 s: %s" % c.snapshot()[1][-3:]
            produce(ctx, topic, [b"marker %d" % k])
            k += 1
            end = time.monotonic() + 1
            while time.monotonic() < end and not c.snapshot()[0]:
                time.sleep(0.05)
        after = ["after %d" % i for i in range(10)]
        produce(ctx, topic, [v.encode() for v in after])
        wait_until("the after-records", lambda: sum(1 for r in c.snapshot()[0] if r["payload"].startswith("after")) >= 10,
                   timeout=20, step=0.1)
    finally:
        c.stop()
    vals = [r["payload"] for r in c.records]
    assert not any(v.startswith("before") for v in vals), "read records produced before positioning"
    assert [v for v in vals if v.startswith("after")] == after, vals
    return "positioned at offset %d" % c.records[0]["offset"]


def consume_timestamp(ctx):
    topic = ctx.name()
    produce(ctx, topic, [b"first"])
    time.sleep(0.05)
    mid = int(time.time() * 1000)
    time.sleep(0.05)
    produce(ctx, topic, [b"ts %d" % i for i in range(5)])  # kcat stamps them itself, all after `mid`
    out = kcat(ctx, "-Q", "-t", "%s:0:%d" % (topic, mid)).decode()
    m = re.search(r"offset (-?\d+)", out)
    assert m and int(m.group(1)) == 1, "kcat -Q for a timestamp between records 0 and 1: %r" % out
    got = consume(ctx, topic, "-o", "s@%d" % mid)
    assert [r["payload"] for r in got] == ["ts %d" % i for i in range(5)], [r["payload"] for r in got]
    assert got[0]["offset"] == 1


def create_topic_fixture(ctx, topic, partitions):
    """kcat cannot create a topic with more than num.partitions; librdkafka's admin API does it."""
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": ctx.bootstrap, "broker.address.family": "v4"})
    a.create_topics([NewTopic(topic, partitions, len(ctx.brokers))], request_timeout=20)[topic].result(25)
    wait_until("topic %s" % topic, lambda: topic in a.list_topics(timeout=10).topics
               and len(a.list_topics(timeout=10).topics[topic].partitions) == partitions, timeout=15)


def group_of_three(ctx):
    topic, group = ctx.name(), ctx.name("g")
    create_topic_fixture(ctx, topic, 6)
    for part in range(6):
        produce(ctx, topic, [b"one %d/%d" % (part, i) for i in range(10)], partition=part)
    args = ["-G", group, "-X", "auto.offset.reset=earliest", "-X", "partition.assignment.strategy=range",
            "-X", "session.timeout.ms=10000", "-X", "heartbeat.interval.ms=500",
            "-X", "auto.commit.interval.ms=200", "-J", "-u", topic]
    cons = [Background(ctx, *args) for _ in range(3)]
    try:
        def stable(which):
            parts = [cons[i].assignment() for i in which]
            return all(parts) and sum(len(s) for s in parts) == 6 and set().union(*parts) == set(range(6))

        wait_until("three kcat -G sharing 6 partitions", lambda: stable([0, 1, 2]), timeout=45, step=0.1)
        three = [sorted(c.assignment()) for c in cons]
        wait_until("the first 60 records", lambda: len({(r["partition"], r["offset"]) for c in cons
                                                        for r in c.snapshot()[0]}) >= 60, timeout=20, step=0.1)
        before = [len(c.snapshot()[0]) for c in cons]
        rc = cons[2].stop()  # leaves the group and commits what it consumed
        assert rc == 0, "kcat exited %s on SIGTERM" % rc
        wait_until("two kcat -G taking over 6 partitions", lambda: stable([0, 1]), timeout=30, step=0.1)
        two = [sorted(c.assignment()) for c in cons[:2]]
        for part in range(6):
            produce(ctx, topic, [b"two %d/%d" % (part, i) for i in range(10)], partition=part)
        wait_until("the second 60 records", lambda: sum(1 for c in cons[:2] for r in c.snapshot()[0]
                                                        if r["payload"].startswith("two")) >= 60, timeout=20, step=0.1)
        seen = {(r["partition"], r["payload"]) for c in cons for r in c.snapshot()[0]}
        again = [r for i, c in enumerate(cons[:2]) for r in c.snapshot()[0][before[i]:] if r["payload"].startswith("one")]
    finally:
        for c in cons:
            c.stop()
    assert len(seen) == 120, "%d distinct records consumed, want 120" % len(seen)
    assert not again, "%d records the third consumer committed consumed again" % len(again)
    return "assignments %s then %s (topic created by librdkafka's AdminClient: kcat cannot)" % (three, two)


def offsets_resume(ctx):
    topic, group = ctx.name(), ctx.name("g")
    vals = values(10, topic)
    produce(ctx, topic, [v.encode() for v in vals])
    first = group_consume(ctx, topic, group, 4)  # exits after 4, committing them on close
    assert [r["offset"] for r in first] == [0, 1, 2, 3], [r["offset"] for r in first]
    rest = group_consume(ctx, topic, group, 6)
    assert [r["offset"] for r in rest] == list(range(4, 10)), "resumed at %d" % rest[0]["offset"]
    assert [r["payload"] for r in rest] == vals[4:]


FAILOVER_BEFORE = 100  # records consumed (so acknowledged by all) before the kill is asked for
FAILOVER_AFTER = 100   # records consumed after a new leader is named


def leader_and_isr(ctx, topic):
    md = json.loads(kcat(ctx, "-L", "-J", "-t", topic, timeout=15))
    (t,) = [t for t in md["topics"] if t["topic"] == topic]
    p = t["partitions"][0]
    return p["leader"], sorted(r["id"] for r in p["isrs"])


def leader_failover(ctx):
    """One partition on every broker; kcat -P (acks=all, idempotent) is fed a
    record every 5 ms on stdin while kcat -C reads; once 100 records are
    consumed the harness kills the leader. Feeding goes on until a new leader
    is named and 100 more are consumed; then kcat -P must exit 0 with no
    failed delivery (kcat reports no per-record acknowledgement: all were
    acknowledged) and kcat -C must have read every record once, in order."""
    topic = ctx.name()
    ids = sorted(ctx.brokers)
    create_topic_fixture(ctx, topic, 1)
    wait_until("%s's full ISR" % topic, lambda: leader_and_isr(ctx, topic)[1] == ids, timeout=30)
    old = leader_and_isr(ctx, topic)[0]
    cons = Background(ctx, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-J", "-u")
    prod = subprocess.Popen(kcat_args(ctx, "-P", "-t", topic, "-p", "0", "-X", "acks=all", "-X",
                                      "enable.idempotence=true", "-X", "linger.ms=1", "-X", "message.timeout.ms=80000"),
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err_lines = []
    threading.Thread(target=lambda: err_lines.extend(prod.stderr.read().decode("utf-8", "replace").splitlines()),
                     daemon=True).start()
    sent = []

    def step():
        v = "%s-%06d" % (topic, len(sent))
        prod.stdin.write(v.encode() + b"\n")
        prod.stdin.flush()
        sent.append(v)
        time.sleep(0.005)

    def consumed():
        return len(cons.snapshot()[0])

    try:
        new = feed_through_failover(ctx, topic, step, consumed, lambda: leader_and_isr(ctx, topic)[0], old,
                                    FAILOVER_BEFORE, FAILOVER_AFTER, "consumed")
        prod.stdin.close()
        rc = prod.wait(90)
        wait_until("kcat -C to read all %d records" % len(sent), lambda: consumed() >= len(sent), timeout=30)
        time.sleep(0.5)  # anything more would be a duplicate
    finally:
        if prod.poll() is None:
            prod.kill()
            prod.wait(10)
        cons.stop()
    # librdkafka's connection errors (the killed broker) come through kcat as
    # "% ERROR: Local: Broker transport failure" lines: expected here; any
    # other error, or a failed delivery, is not.
    failed = [l for l in err_lines if re.search(r"^% ERROR|Delivery failed", l)
              and "Local: Broker transport failure" not in l]
    assert rc == 0 and not failed, "kcat -P exited %s: %s" % (rc, failed[:3])
    got = cons.snapshot()[0]
    assert [r["payload"] for r in got] == sent, "consumed %d records, sent %d (lost, duplicated or reordered)" % (
        len(got), len(sent))
    assert [r["offset"] for r in got] == list(range(len(sent))), "offsets not 0..%d" % (len(sent) - 1)
    return "%d records, leader %d killed, %d took over: all delivered and consumed once, in order" % (
        len(sent), old, new)


def security_round_trip(ctx):
    """A security column (ctx.security), over its listener only. kcat has
    no admin API: the topic is auto-created by kcat -P (acks=all) and must
    show in kcat -L with the broker advertised on this listener; a kcat -G
    group member reads every record exactly and commits as it exits; a
    second one in the group reads only records produced after, so the
    commit is read back as the group's position."""
    topic, group = ctx.name(), ctx.name("group")
    vals = values(SECURE_N, topic)
    produce(ctx, topic, [v.encode() for v in vals], "-X", "acks=all")
    md = json.loads(kcat(ctx, "-L", "-J", "-t", topic))
    ports = sorted({int(b["name"].rsplit(":", 1)[1]) for b in md["brokers"]})
    assert ports == [ctx.port], "brokers advertised on ports %s, not the column's %d" % (ports, ctx.port)
    assert [p["partition"] for t in md["topics"] if t["topic"] == topic for p in t["partitions"]] == [0], md["topics"]
    got = group_consume(ctx, topic, group, SECURE_N)
    assert [(r["offset"], r["payload"]) for r in got] == list(enumerate(vals)), [r["offset"] for r in got]
    more = values(5, topic + " more")
    produce(ctx, topic, [v.encode() for v in more], "-X", "acks=all")
    rest = group_consume(ctx, topic, group, len(more))
    assert [(r["offset"], r["payload"]) for r in rest] == list(enumerate(more, SECURE_N)), \
        "the group resumed at %s, not at its commit %d" % (rest[0]["offset"] if rest else None, SECURE_N)
    return "%s over %s: topic auto-created by kcat -P (no admin API), %d records back in a group, resumed at " \
           "its commit %d" % (ctx.security["listener"], ctx.security["security_protocol"], SECURE_N, SECURE_N)


SECURE_N = 20


def scenarios():
    return {
        "metadata": metadata,
        "create_delete_topics": Unsupported(NO_ADMIN % "create or delete topics"),
        "produce_acks0": produce_acks("0"),
        "produce_acks1": produce_acks("1"),
        "produce_acksall": produce_acks("all"),
        "keys_headers_timestamps": keys_headers_timestamps,
        "compression_gzip": compression("gzip"),
        "compression_snappy": compression("snappy"),
        "compression_lz4": compression("lz4"),
        "compression_zstd": compression("zstd"),
        "idempotent_produce": idempotent_produce,
        "transactions": transactions,
        "transactions_offsets": Unsupported(
            "kcat consumes (-C, -G) and produces (-P) in separate runs and never calls librdkafka's "
            "send_offsets_to_transaction: a -P run's transaction (-X transactional.id) cannot carry a "
            "group's offsets"),
        "consume_earliest": consume_earliest,
        "consume_latest": consume_latest,
        "consume_timestamp": consume_timestamp,
        "group_of_three": group_of_three,
        "offsets_resume": offsets_resume,
        "admin_configs": Unsupported(NO_ADMIN % "describe or alter configs"),
        "admin_grow_partitions": Unsupported(NO_ADMIN % "create partitions"),
        "admin_groups": Unsupported(NO_ADMIN % "list or describe groups; -L lists brokers and topics only"),
        "admin_delete_records": Unsupported(NO_ADMIN % "delete records"),
        **{sid: security_round_trip for sid in SECURITY_COLUMNS},
        "leader_failover": leader_failover,
    }
