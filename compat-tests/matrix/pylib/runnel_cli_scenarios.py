"""The matrix scenarios through Runnel's own CLI (`runnel topic|produce|
consume|group|cluster`, a Kafka client on Runnel's codec): produce
--format json (keys, headers, partition, timestamp), --acks, -z, the
idempotent producer by default; consume -f (kcat's format tokens) from
beginning, end, an offset or @timestamp, -e to exit at the end, -G as a
classic group member; topic create/describe/alter-config/add-partitions/
delete; group list/describe; cluster info; -X for a security column's
settings (librdkafka's names). The CLI has no transactions and no
DeleteRecords: those scenarios are unsupported.
"""

import json
import os
import signal
import subprocess
import threading
import time

import librdkafka_security
from matrix_driver import MATRIX_DIR, SECURITY_COLUMNS, Unsupported, feed_through_failover, wait_until

N = 100
SECURE_N = 20
FORMAT = "%p\\t%o\\t%T\\t%K\\t%k\\t%S\\t%s\\n"  # one record a line, lengths say null (-1)


def binary():
    """The `runnel` binary: $MATRIX_RUNNEL (run_matrix.py sets it), else the release build."""
    return os.environ.get("MATRIX_RUNNEL") or os.path.join(MATRIX_DIR, "..", "..", "build", "release", "runnel")


def cli_args(ctx, *args):
    security = []  # a security column's client settings, as -X options (librdkafka's names)
    for k, v in librdkafka_security.config(ctx.security or {}).items():
        security += ["-X", "%s=%s" % (k, v)]
    return [binary()] + list(args) + ["-b", ctx.bootstrap] + security


def cli(ctx, *args, input=None, timeout=60):
    p = subprocess.run(cli_args(ctx, *args), input=input, capture_output=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("runnel %s exited %d: %s" % (" ".join(args), p.returncode,
                                                          p.stderr.decode("utf-8", "replace").strip()[-300:]))
    return p.stdout


def cli_json(ctx, *args):
    return json.loads(cli(ctx, *args, "-o", "json"))


def parse_records(out):
    """runnel consume -f FORMAT output -> [{partition, offset, timestamp, key, value}]."""
    records = []
    for line in out.decode("utf-8", "replace").split("\n"):
        if not line:
            continue
        p, o, ts, klen, key, vlen, value = line.split("\t", 6)
        records.append({"partition": int(p), "offset": int(o), "timestamp": int(ts),
                        "key": None if klen == "-1" else key, "value": None if vlen == "-1" else value})
    return records


def produce_json(ctx, topic, records, *extra):
    """records: dicts as runnel produce --format json reads them."""
    cli(ctx, "produce", topic, "--format", "json", *extra, input="".join(json.dumps(r) + "\n" for r in records).encode())


def produce_lines(ctx, topic, lines, *extra):
    cli(ctx, "produce", topic, *extra, input="".join(l + "\n" for l in lines).encode())


def consume(ctx, topic, *extra):
    return parse_records(cli(ctx, "consume", topic, "-e", "-f", FORMAT, *extra))


def values(n, tag):
    return [("%s value %d " % (tag, i)) + "x" * (i % 40) for i in range(n)]


def create_topic(ctx, topic, partitions, *extra):
    cli(ctx, "topic", "create", topic, "-p", str(partitions), "-r", str(len(ctx.brokers)), *extra)
    wait_until("topic %s led" % topic, lambda: all(
        p["leader"] >= 0 for p in cli_json(ctx, "topic", "describe", topic)[0]["partitions"]), timeout=20)


class Background:
    """A long-running `runnel consume` whose stdout records are collected by a thread."""

    def __init__(self, ctx, *args):
        self.proc = subprocess.Popen(cli_args(ctx, "consume", *args, "-f", FORMAT), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.records, self.errors = [], []
        self.lock = threading.Lock()
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self):
        for raw in self.proc.stdout:
            recs = parse_records(raw)
            with self.lock:
                self.records += recs

    def _read_err(self):
        for raw in self.proc.stderr:
            with self.lock:
                self.errors.append(raw.decode("utf-8", "replace").strip())

    def snapshot(self):
        with self.lock:
            return list(self.records)

    def stop(self):
        """SIGTERM: the CLI commits, leaves its group and exits 0."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                raise AssertionError("runnel consume did not exit within 30 s of SIGTERM")
        return self.proc.returncode


# -- scenarios ---------------------------------------------------------------

def metadata(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 3)
    info = cli_json(ctx, "cluster", "info")
    listed = {b["id"]: (b["host"], b["port"]) for b in info["brokers"]}
    assert listed == ctx.brokers, info["brokers"]
    assert info["controller_id"] in ctx.brokers or info["controller_id"] == -1, info
    (t,) = cli_json(ctx, "topic", "describe", topic)
    assert [p["partition"] for p in t["partitions"]] == [0, 1, 2], t
    ids = sorted(ctx.brokers)
    for p in t["partitions"]:
        assert p["leader"] in ids and sorted(p["replicas"]) == ids, p
    listed_topics = cli(ctx, "topic", "list").decode().split()
    assert topic in listed_topics, listed_topics
    return "brokers %s, a topic of 3 partitions with replicas %s, cluster id %s" % (ids, ids, info["cluster_id"])


def create_delete_topics(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 2, "-c", "retention.ms=3600000")
    (t,) = cli_json(ctx, "topic", "describe", topic)
    assert t["partition_count"] == 2 and t["configs"].get("retention.ms") == "3600000", t
    p = subprocess.run(cli_args(ctx, "topic", "create", topic, "-p", "2"), capture_output=True, timeout=60)
    assert p.returncode != 0 and b"TOPIC_ALREADY_EXISTS" in p.stderr, (p.returncode, p.stderr[-200:])
    cli(ctx, "topic", "delete", topic)
    wait_until("%s gone" % topic, lambda: topic not in cli(ctx, "topic", "list").decode().split(), timeout=20)
    return "created with 2 partitions and retention.ms, TOPIC_ALREADY_EXISTS for a second create, deleted"


def produce_acks(acks):
    def scenario(ctx):
        topic = ctx.name()
        create_topic(ctx, topic, 1)
        vals = values(N, topic)
        produce_lines(ctx, topic, vals, "--acks", acks, "-p", "0")
        got = consume(ctx, topic)
        assert [r["value"] for r in got] == vals, "values differ"
        assert [r["offset"] for r in got] == list(range(N))
        return "%d records" % N
    return scenario


def keys_headers_timestamps(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    base = int(time.time() * 1000) - 60000
    records, want = [], []
    for i in range(20):
        key = None if i % 5 == 3 else "key-%d" % i
        value = None if i % 7 == 2 else "value-%d" % i
        records.append({"key": key, "value": value, "partition": 0, "timestamp": base + i * 10,
                        "headers": {"h": "one-%d" % i, "x": str(i)}})
        want.append((key, value, base + i * 10))
    produce_json(ctx, topic, records)
    out = cli(ctx, "consume", topic, "-e", "-f", "%K\\t%k\\t%S\\t%s\\t%T\\t%h\\n").decode()
    lines = [l.split("\t") for l in out.split("\n") if l]
    assert len(lines) == len(want), "%d records back" % len(lines)
    for i, ((klen, k, vlen, v, ts, headers), (key, value, stamp)) in enumerate(zip(lines, want)):
        assert (None if klen == "-1" else k) == key, "record %d key %r != %r" % (i, k, key)
        assert (None if vlen == "-1" else v) == value, "record %d value %r != %r" % (i, v, value)
        assert int(ts) == stamp, "record %d timestamp %s != %d" % (i, ts, stamp)
        assert sorted(headers.split(",")) == sorted(["h=one-%d" % i, "x=%d" % i]), "record %d headers %r" % (i, headers)
    return "keys, headers, null keys/values and producer timestamps exact (--format json)"


def compression(codec):
    def scenario(ctx):
        topic = ctx.name()
        create_topic(ctx, topic, 1)
        vals = [v * 20 for v in values(N, topic)]
        produce_lines(ctx, topic, vals, "-z", codec, "-p", "0", "-X", "linger.ms=50")
        got = consume(ctx, topic)
        assert [r["value"] for r in got] == vals, "values differ"
        assert [r["offset"] for r in got] == list(range(N))
    return scenario


def idempotent_produce(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    vals = values(N * 5, topic)
    produce_lines(ctx, topic, vals, "-p", "0", "-X", "batch.size=2000")  # idempotent by default
    got = consume(ctx, topic)
    assert [r["value"] for r in got] == vals, "values differ (duplicates or reorder)"
    assert [r["offset"] for r in got] == list(range(len(vals)))
    return "%d records in batches of at most 2000 bytes, idempotent (the CLI's default)" % len(vals)


def group_consume(ctx, topic, group, count, *extra):
    return parse_records(cli(ctx, "consume", topic, "-G", group, "-n", str(count), "-f", FORMAT, *extra, timeout=60))


def consume_earliest(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    vals = values(10, topic)
    produce_lines(ctx, topic, vals)
    got = group_consume(ctx, topic, ctx.name("g"), len(vals), "-o", "beginning")
    assert [r["value"] for r in got] == vals
    assert got[0]["offset"] == 0


def consume_latest(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    produce_lines(ctx, topic, ["before %d" % i for i in range(5)])
    c = Background(ctx, topic, "-o", "end")
    try:
        # Positioned once a marker produced now comes back; markers until one does.
        deadline = time.monotonic() + 20
        k = 0
        while not any(r["value"].startswith("marker") for r in c.snapshot()):
            assert time.monotonic() < deadline, "no marker consumed in 20 s: %s" % c.errors[-3:]
            produce_lines(ctx, topic, ["marker %d" % k])
            k += 1
            end = time.monotonic() + 1
            while time.monotonic() < end and not c.snapshot():
                time.sleep(0.05)
        after = ["after %d" % i for i in range(10)]
        produce_lines(ctx, topic, after)
        wait_until("the after-records", lambda: sum(1 for r in c.snapshot() if r["value"].startswith("after")) >= 10,
                   timeout=20, step=0.1)
    finally:
        rc = c.stop()
    assert rc == 0, "runnel consume exited %s: %s" % (rc, c.errors[-3:])
    vals = [r["value"] for r in c.records]
    assert not any(v.startswith("before") for v in vals), "read records produced before positioning"
    assert [v for v in vals if v.startswith("after")] == after, vals
    return "positioned at offset %d" % c.records[0]["offset"]


def consume_timestamp(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    base = int(time.time() * 1000) - 10000
    produce_json(ctx, topic, [{"value": "first", "timestamp": base}] +
                 [{"value": "ts %d" % i, "timestamp": base + 1000 + i} for i in range(5)])
    got = consume(ctx, topic, "-o", "@%d" % (base + 500))
    assert [r["value"] for r in got] == ["ts %d" % i for i in range(5)], [r["value"] for r in got]
    assert got[0]["offset"] == 1


def group_of_three(ctx):
    topic, group = ctx.name(), ctx.name("g")
    create_topic(ctx, topic, 6)
    produce_json(ctx, topic, [{"value": "one %d/%d" % (p, i), "partition": p} for p in range(6) for i in range(10)])
    args = [topic, "-G", group, "-o", "beginning", "-X", "session.timeout.ms=10000", "-X", "heartbeat.interval.ms=500",
            "-X", "auto.commit.interval.ms=200"]
    cons = [Background(ctx, *args) for _ in range(3)]

    def holders():
        d = cli_json(ctx, "group", "describe", group)
        return d["state"], {p["partition"]: p["member_id"] for p in d["partitions"] if p["member_id"]}, len(d["members"])

    try:
        def stable(members):
            state, held, n = holders()
            return state == "Stable" and n == members and sorted(held) == list(range(6)) and \
                len(set(held.values())) == members
        wait_until("three members sharing 6 partitions", lambda: stable(3), timeout=45, step=0.2)
        three = holders()[1]
        wait_until("the first 60 records", lambda: len({(r["partition"], r["offset"]) for c in cons
                                                        for r in c.snapshot()}) >= 60, timeout=20, step=0.1)
        before = [len(c.snapshot()) for c in cons]
        rc = cons[2].stop()  # commits, leaves the group
        assert rc == 0, "runnel consume exited %s on SIGTERM: %s" % (rc, cons[2].errors[-3:])
        wait_until("two members taking over 6 partitions", lambda: stable(2), timeout=30, step=0.2)
        produce_json(ctx, topic, [{"value": "two %d/%d" % (p, i), "partition": p} for p in range(6) for i in range(10)])
        wait_until("the second 60 records", lambda: sum(1 for c in cons[:2] for r in c.snapshot()
                                                        if r["value"].startswith("two")) >= 60, timeout=30, step=0.1)
        seen = {(r["partition"], r["value"]) for c in cons for r in c.snapshot()}
        again = [r for i, c in enumerate(cons[:2]) for r in c.snapshot()[before[i]:] if r["value"].startswith("one")
                 and r["partition"] in {p for p, m in three.items() if m not in holders()[1].values()}]
    finally:
        for c in cons:
            c.stop()
    assert len(seen) == 120, "%d distinct records consumed, want 120" % len(seen)
    assert not again, "%d records the third member committed consumed again" % len(again)
    return "three members held 6 partitions (group describe), two after one left; each record once"


def offsets_resume(ctx):
    topic, group = ctx.name(), ctx.name("g")
    create_topic(ctx, topic, 1)
    vals = values(10, topic)
    produce_lines(ctx, topic, vals)
    first = group_consume(ctx, topic, group, 4, "-o", "beginning")  # exits after 4, committing them
    assert [r["offset"] for r in first] == [0, 1, 2, 3], [r["offset"] for r in first]
    rest = group_consume(ctx, topic, group, 6, "-o", "beginning")
    assert [r["offset"] for r in rest] == list(range(4, 10)), "resumed at %d" % rest[0]["offset"]
    assert [r["value"] for r in rest] == vals[4:]


def admin_configs(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    cli(ctx, "topic", "alter-config", topic, "--set", "retention.ms=7200000", "--set", "cleanup.policy=compact")
    (t,) = cli_json(ctx, "topic", "describe", topic)
    assert t["configs"].get("retention.ms") == "7200000" and t["configs"].get("cleanup.policy") == "compact", t
    cli(ctx, "topic", "alter-config", topic, "--delete", "cleanup.policy")
    (t,) = cli_json(ctx, "topic", "describe", topic, "--all-configs")
    assert t["configs"].get("cleanup.policy") == "delete" and t["configs"].get("retention.ms") == "7200000", \
        {k: t["configs"].get(k) for k in ("cleanup.policy", "retention.ms")}
    return "set retention.ms and cleanup.policy, deleted cleanup.policy back to its default"


def admin_grow_partitions(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 2)
    cli(ctx, "topic", "add-partitions", topic, "-p", "5")
    wait_until("5 partitions led", lambda: [p["leader"] >= 0 for p in
                                            cli_json(ctx, "topic", "describe", topic)[0]["partitions"]] == [True] * 5,
               timeout=20)
    produce_json(ctx, topic, [{"value": "p4", "partition": 4}])
    got = consume(ctx, topic, "-p", "4")
    assert [r["value"] for r in got] == ["p4"], got
    return "2 -> 5 partitions, a record on the new partition 4 read back"


def admin_groups(ctx):
    topic, group = ctx.name(), ctx.name("g")
    create_topic(ctx, topic, 2)
    produce_json(ctx, topic, [{"value": "v%d" % i, "partition": i % 2} for i in range(10)])
    c = Background(ctx, topic, "-G", group, "-o", "beginning")
    try:
        wait_until("the member's records", lambda: len(c.snapshot()) >= 10, timeout=30, step=0.1)
        wait_until("the group listed", lambda: any(g["group"] == group for g in cli_json(ctx, "group", "list")),
                   timeout=20)
        d = wait_until("the group stable", lambda: (lambda d: d if d["state"] == "Stable" else None)(
            cli_json(ctx, "group", "describe", group)), timeout=20)
        assert len(d["members"]) == 1 and d["protocol_type"] == "consumer", d
    finally:
        rc = c.stop()
    assert rc == 0, "runnel consume exited %s" % rc
    d = cli_json(ctx, "group", "describe", group)
    assert d["state"] == "Empty" and not d["members"], d
    committed = {p["partition"]: p["current_offset"] for p in d["partitions"]}
    assert committed == {0: 5, 1: 5}, d["partitions"]
    return "listed; Stable with 1 member, then Empty with commits %s after it left" % committed


def security_round_trip(ctx):
    """A security column (ctx.security), over its listener only: the CLI
    creates a topic, lists the brokers on this listener, produces, reads
    every record back as a group member and resumes at its commit."""
    topic, group = ctx.name(), ctx.name("group")
    create_topic(ctx, topic, 1)
    info = cli_json(ctx, "cluster", "info")
    ports = sorted({b["port"] for b in info["brokers"]})
    assert ports == [ctx.port], "brokers advertised on ports %s, not the column's %d" % (ports, ctx.port)
    vals = values(SECURE_N, topic)
    produce_lines(ctx, topic, vals)
    got = group_consume(ctx, topic, group, SECURE_N, "-o", "beginning")
    assert [(r["offset"], r["value"]) for r in got] == list(enumerate(vals)), [r["offset"] for r in got]
    more = values(5, topic + " more")
    produce_lines(ctx, topic, more)
    rest = group_consume(ctx, topic, group, len(more), "-o", "beginning")
    assert [(r["offset"], r["value"]) for r in rest] == list(enumerate(more, SECURE_N)), \
        "the group resumed at %s, not at its commit %d" % (rest[0]["offset"] if rest else None, SECURE_N)
    return "%s over %s: topic created, %d records back in a group, resumed at its commit %d" % (
        ctx.security["listener"], ctx.security["security_protocol"], SECURE_N, SECURE_N)


FAILOVER_BEFORE = 100
FAILOVER_AFTER = 100


def leader_of(ctx, topic):
    (t,) = cli_json(ctx, "topic", "describe", topic)
    p = t["partitions"][0]
    return p["leader"], sorted(p["isr"])


def leader_failover(ctx):
    """One partition on every broker; `runnel produce` (acks=all, idempotent)
    is fed a record every 5 ms on stdin while `runnel consume` reads; once
    100 records are consumed the harness kills the leader. Feeding goes on
    until a new leader is named and 100 more are consumed; then the producer
    must exit 0 (it exits non-zero on any record not acknowledged) and the
    consumer must have read every record once, in order."""
    topic = ctx.name()
    ids = sorted(ctx.brokers)
    create_topic(ctx, topic, 1)
    wait_until("%s's full ISR" % topic, lambda: leader_of(ctx, topic)[1] == ids, timeout=30)
    old = leader_of(ctx, topic)[0]
    cons = Background(ctx, topic, "-o", "beginning")
    prod = subprocess.Popen(cli_args(ctx, "produce", topic, "-p", "0", "-X", "linger.ms=1",
                                     "-X", "delivery.timeout.ms=80000", "-X", "retries=100"),
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = []
    threading.Thread(target=lambda: err.append(prod.stderr.read().decode("utf-8", "replace")), daemon=True).start()
    sent = []

    def step():
        v = "%s-%06d" % (topic, len(sent))
        prod.stdin.write(v.encode() + b"\n")
        prod.stdin.flush()
        sent.append(v)
        time.sleep(0.005)

    def consumed():
        return len(cons.snapshot())

    try:
        new = feed_through_failover(ctx, topic, step, consumed, lambda: leader_of(ctx, topic)[0], old,
                                    FAILOVER_BEFORE, FAILOVER_AFTER, "consumed")
        prod.stdin.close()
        rc = prod.wait(90)
        wait_until("runnel consume to read all %d records" % len(sent), lambda: consumed() >= len(sent), timeout=30)
        time.sleep(0.5)  # anything more would be a duplicate
    finally:
        if prod.poll() is None:
            prod.kill()
            prod.wait(10)
        cons.stop()
    assert rc == 0, "runnel produce exited %s: %s" % (rc, "".join(err)[-300:])
    got = cons.snapshot()
    assert [r["value"] for r in got] == sent, "consumed %d records, sent %d (lost, duplicated or reordered)" % (
        len(got), len(sent))
    assert [r["offset"] for r in got] == list(range(len(sent))), "offsets not 0..%d" % (len(sent) - 1)
    return "%d records, leader %d killed, %d took over: all acknowledged and consumed once, in order" % (
        len(sent), old, new)


def scenarios():
    no_txn = "the runnel CLI has no transactional producer (no -X transactional.id, no send_offsets_to_transaction)"
    return {
        "metadata": metadata,
        "create_delete_topics": create_delete_topics,
        "produce_acks0": produce_acks("0"),
        "produce_acks1": produce_acks("1"),
        "produce_acksall": produce_acks("all"),
        "keys_headers_timestamps": keys_headers_timestamps,
        "compression_gzip": compression("gzip"),
        "compression_snappy": compression("snappy"),
        "compression_lz4": compression("lz4"),
        "compression_zstd": compression("zstd"),
        "idempotent_produce": idempotent_produce,
        "transactions": Unsupported(no_txn),
        "transactions_offsets": Unsupported(no_txn),
        "consume_earliest": consume_earliest,
        "consume_latest": consume_latest,
        "consume_timestamp": consume_timestamp,
        "group_of_three": group_of_three,
        "offsets_resume": offsets_resume,
        "admin_configs": admin_configs,
        "admin_grow_partitions": admin_grow_partitions,
        "admin_groups": admin_groups,
        "admin_delete_records": Unsupported("the runnel CLI has no DeleteRecords command"),
        **{sid: security_round_trip for sid in SECURITY_COLUMNS},
        "leader_failover": leader_failover,
    }
