"""The `runnel` CLI against a real Runnel, driven as a user would, with
kcat and confluent-kafka (librdkafka) as the independent other side:

  - topic create / list / describe / alter-config / add-partitions / delete,
    each checked through kcat -L -J or confluent-kafka's AdminClient;
  - produce with keys (-K) and headers (-H), read back with kcat exactly
    (offsets, keys, values, headers), keys on the partitions librdkafka's
    murmur2 partitioner (Java's default) picks for the same keys;
  - consume -e with -f format strings, byte for byte what kcat prints for
    the same format; -o beginning/end/N/-N/@timestamp, -n;
  - JSON input, every codec, acks=1 without idempotence;
  - group describe lag after a confluent-kafka group consumer commits,
    reset-offsets (dry run, then --execute), runnel consume -G, group delete;
  - cluster info / health; the error paths and their exit codes.

The same tests run against Apache Kafka 4.1.1 (kafka_harness, single node
in KRaft mode) with --kafka: the CLI is a client of any Kafka broker.

usage: /usr/bin/python3 cli_test.py <runnel binary> [--kafka <jar cache dir>]
"""

import json
import os
import socket
import struct
import subprocess
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

import kcat_test
from runnel_harness import Runnel, run_tests, runnel_binary

RUNNEL = None  # the binary under test
BROKER = None


def cli(*args, input=None, expect=0, timeout=60):
    """Runs `runnel ARGS -b <broker>`; returns (stdout, stderr) as text."""
    cmd = [RUNNEL] + list(args)
    if args and args[0] not in ("--help",) and "-b" not in args:
        cmd += ["-b", BROKER.bootstrap]
    p = subprocess.run(cmd, input=input, capture_output=True, timeout=timeout)
    if p.returncode != expect:
        raise AssertionError("%s exited %d (expected %d)\nstdout: %s\nstderr: %s" % (
            " ".join(cmd), p.returncode, expect, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")))
    return p.stdout.decode(errors="surrogateescape"), p.stderr.decode(errors="replace")


def cli_json(*args):
    out, _ = cli(*args)
    return json.loads(out)


def kcat(*args, input=None):
    return kcat_test.kcat(BROKER, *args, input=input)


def kcat_records(topic, partition):
    out = kcat("-C", "-t", topic, "-p", str(partition), "-o", "beginning", "-e", "-J")
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def kcat_topic(topic):
    md = json.loads(kcat("-L", "-J", "-t", topic))
    return md["topics"][0]


def admin():
    return AdminClient({"bootstrap.servers": BROKER.bootstrap, "broker.address.family": "v4"})


def topic_configs(topic):
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    a = admin()  # alive until the future completes
    entries = a.describe_configs([res])[res].result(timeout=30)
    return {k: e.value for k, e in entries.items()}


def murmur2(data):
    """Kafka's Utils.murmur2, written again here so the test does not trust the CLI's."""
    m, r = 0x5bd1e995, 24
    h = (0x9747b28c ^ len(data)) & 0xffffffff
    n4 = len(data) // 4
    for i in range(n4):
        k = struct.unpack_from("<I", data, i * 4)[0]
        k = (k * m) & 0xffffffff
        k ^= k >> r
        k = (k * m) & 0xffffffff
        h = (h * m) & 0xffffffff
        h ^= k
    tail = data[n4 * 4:]
    if len(tail) == 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if len(tail) >= 1:
        h ^= tail[0]
        h = (h * m) & 0xffffffff
    h ^= h >> 13
    h = (h * m) & 0xffffffff
    h ^= h >> 15
    return h


def key_partition(key, partitions):
    return (murmur2(key.encode()) & 0x7fffffff) % partitions


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --- topics -----------------------------------------------------------------

def topic_lifecycle():
    out, _ = cli("topic", "create", "cli-life", "-p", "3", "-r", "1", "-c", "retention.ms=3600000",
                 "-c", "max.message.bytes=200000")
    assert "created topic cli-life (3 partitions, replication factor 1)" in out, out
    t = kcat_topic("cli-life")
    assert len(t["partitions"]) == 3, t

    listed = cli_json("topic", "list", "-o", "json")
    mine = [x for x in listed if x["name"] == "cli-life"]
    assert mine == [{"name": "cli-life", "partitions": 3, "replication_factor": 1, "internal": False}], listed
    assert not any(x["name"] == "__consumer_offsets" for x in listed), "internal topics listed without -i"
    text, _ = cli("topic", "list")
    assert text.splitlines()[0].split() == ["TOPIC", "PARTITIONS", "REPLICATION"], text

    d = cli_json("topic", "describe", "cli-life", "-o", "json")
    assert len(d) == 1 and d[0]["name"] == "cli-life" and d[0]["partition_count"] == 3, d
    for i, p in enumerate(d[0]["partitions"]):
        assert p["partition"] == i and p["leader"] == 1 and p["replicas"] == [1] and p["isr"] == [1], p
    assert d[0]["configs"] == {"retention.ms": "3600000", "max.message.bytes": "200000"}, d[0]["configs"]

    text, _ = cli("topic", "describe", "cli-life")
    lines = text.splitlines()
    assert lines[0] == "TOPIC cli-life  PARTITIONS 3  REPLICATION 1", lines
    header = lines[1]
    assert header.split() == ["PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR", "OFFLINE"], header
    # Aligned: each column's cells start where its heading does.
    col = header.index("LEADER")
    for row in lines[2:5]:
        assert row[col] == "1" and row[:col].strip() in ("0", "1", "2"), (header, row)
    assert any(l.startswith("retention.ms") and "3600000" in l and "DYNAMIC_TOPIC_CONFIG" in l for l in lines), text

    out, _ = cli("topic", "alter-config", "cli-life", "--set", "cleanup.policy=compact", "--delete", "retention.ms")
    assert "altered configs of topic cli-life" in out, out
    cfg = topic_configs("cli-life")
    assert cfg["cleanup.policy"] == "compact", cfg
    assert cfg["retention.ms"] == "604800000", "retention.ms not back to the default: %r" % cfg["retention.ms"]
    d = cli_json("topic", "describe", "cli-life", "-o", "json")
    assert d[0]["configs"] == {"cleanup.policy": "compact", "max.message.bytes": "200000"}, d[0]["configs"]

    out, _ = cli("topic", "add-partitions", "cli-life", "-p", "5")
    assert "now has 5 partitions" in out, out
    assert len(kcat_topic("cli-life")["partitions"]) == 5

    out, _ = cli("topic", "delete", "cli-life")
    assert "deleted topic cli-life" in out, out
    deadline = time.monotonic() + 20
    while any(x["name"] == "cli-life" for x in cli_json("topic", "list", "-o", "json")):
        assert time.monotonic() < deadline, "cli-life still listed 20 s after delete"
        time.sleep(0.2)
    md = json.loads(kcat("-L", "-J"))
    assert "cli-life" not in [t["topic"] for t in md["topics"]], md


def error_paths():
    cli("topic", "create", "cli-dup", "-p", "1")
    _, err = cli("topic", "create", "cli-dup", "-p", "1", expect=1)
    assert "TOPIC_ALREADY_EXISTS (36)" in err and "cli-dup" in err, err
    assert "hint:" in err, err
    out, _ = cli("topic", "create", "cli-dup", "-p", "1", "--if-not-exists")
    assert "already exists" in out, out
    _, err = cli("topic", "add-partitions", "cli-dup", "-p", "1", expect=1)
    assert "INVALID_PARTITIONS (37)" in err, err
    _, err = cli("topic", "describe", "cli-no-such-topic", expect=1)
    assert "UNKNOWN_TOPIC_OR_PARTITION (3)" in err, err
    _, err = cli("topic", "create", "cli-bad", "-p", "1", "-c", "cleanup.policy=sideways", expect=1)
    assert "INVALID_CONFIG (40)" in err, err
    # Usage: exit 2, before any connection.
    _, err = cli("topic", "create", "x", "--bogus", expect=2)
    assert "unknown option --bogus" in err, err
    _, err = cli("topic", "create", "x", "-p", "three", expect=2)
    assert "integer" in err, err
    cli("produce", "cli-dup", "-X", "no.such.thing=1", expect=2)
    cli("frobnicate", expect=2)
    # Nothing listening: exit 3.
    _, err = cli("topic", "list", "-b", "127.0.0.1:%d" % free_port(), "-X", "retries=0", expect=3)
    assert "cannot connect" in err or "no bootstrap broker" in err, err
    cli("produce", "cli-dup", "-b", "127.0.0.1:%d" % free_port(), "-X", "retries=0", input=b"x\n", expect=3)
    cli("consume", "cli-dup", "-b", "127.0.0.1:%d" % free_port(), "-X", "retries=0", "-e", expect=3)
    # --help everywhere, exit 0.
    for cmd in (["topic", "create"], ["topic", "list"], ["topic", "describe"], ["topic", "alter-config"],
                ["topic", "add-partitions"], ["topic", "delete"], ["produce"], ["consume"], ["group", "list"],
                ["group", "describe"], ["group", "reset-offsets"], ["group", "delete"], ["cluster", "info"],
                ["cluster", "health"]):
        out, _ = cli(*(cmd + ["--help"]))
        assert out.startswith("usage: runnel " + " ".join(cmd)), (cmd, out)
        assert "--brokers" in out, (cmd, out)


# --- produce and consume -----------------------------------------------------

PAIRS = [("user-%d" % i, "value %d é" % i) for i in range(60)]
HEADERS = [("h1", "v1"), ("trace", "a=b")]


def produce_keys_and_headers():
    cli("topic", "create", "cli-keys", "-p", "4")
    data = "".join("%s\t%s\n" % kv for kv in PAIRS) + "no separator here\n"
    args = ["produce", "cli-keys", "-K", "\t"]
    for h in HEADERS:
        args += ["-H", "%s=%s" % h]
    cli(*args, input=data.encode())
    # librdkafka's murmur2 partitioner (Java's default) on the same keys.
    cli("topic", "create", "cli-keys-rdkafka", "-p", "4")
    p = Producer({"bootstrap.servers": BROKER.bootstrap, "broker.address.family": "v4",
                  "partitioner": "murmur2_random"})
    for k, v in PAIRS:
        p.produce("cli-keys-rdkafka", key=k.encode(), value=v.encode())
    assert p.flush(30) == 0
    rdkafka_partition = {}
    for part in range(4):
        for rec in kcat_records("cli-keys-rdkafka", part):
            rdkafka_partition[rec["key"]] = part

    seen = {}
    for part in range(4):
        records = kcat_records("cli-keys", part)
        for offset, rec in enumerate(records):
            assert rec["offset"] == offset, rec
            if rec["key"] is None:
                assert rec["payload"] == "no separator here", rec
                seen[None] = part
                continue
            assert rec["headers"] == [x for h in HEADERS for x in h], rec
            assert rec["tstype"] == "create", rec
            seen[rec["key"]] = (part, rec["payload"])
    assert None in seen, "the unkeyed line is missing"
    for k, v in PAIRS:
        assert k in seen, "key %s missing" % k
        part, value = seen[k]
        assert value == v, (k, value, v)
        assert part == key_partition(k, 4), "%s on %d, murmur2 says %d" % (k, part, key_partition(k, 4))
        assert part == rdkafka_partition[k], "%s on %d, librdkafka put it on %d" % (k, part, rdkafka_partition[k])
    assert len(seen) == len(PAIRS) + 1
    # Per partition, the keys are in the order they were produced.
    for part in range(4):
        keys = [r["key"] for r in kcat_records("cli-keys", part) if r["key"]]
        assert keys == [k for k, _ in PAIRS if key_partition(k, 4) == part], (part, keys)


FORMATS = [
    "%t|%p|%o|%k|%K|%s|%S|%h\\n",
    "key=%k value=%s\\ttime=%T\\n",
    "%R%s",
    "[%o] 100%% \\x41 %k\\r\\n",
]


def consume_formats_match_kcat():
    for part in range(4):
        for fmt in FORMATS:
            want = kcat("-C", "-t", "cli-keys", "-p", str(part), "-o", "beginning", "-e", "-f", fmt)
            got = subprocess.run([RUNNEL, "consume", "cli-keys", "-b", BROKER.bootstrap, "-p", str(part),
                                  "-o", "beginning", "-e", "-f", fmt], capture_output=True, timeout=60)
            assert got.returncode == 0, got.stderr
            assert got.stdout == want, "partition %d format %r:\nrunnel %r\nkcat   %r" % (part, fmt, got.stdout[:300],
                                                                                        want[:300])
            assert want, "nothing read from partition %d" % part


def consume_start_offsets():
    cli("topic", "create", "cli-offsets", "-p", "1")
    before = int(time.time() * 1000)
    cli("produce", "cli-offsets", input="".join("r%d\n" % i for i in range(10)).encode())
    time.sleep(0.05)
    mid = int(time.time() * 1000)
    time.sleep(0.05)
    cli("produce", "cli-offsets", input="".join("r%d\n" % i for i in range(10, 15)).encode())

    def offsets(*args):
        out, _ = cli("consume", "cli-offsets", "-e", "-f", "%o %s\\n", *args)
        return [tuple(l.split(" ")) for l in out.splitlines()]

    assert offsets("-o", "beginning") == [(str(i), "r%d" % i) for i in range(15)]
    assert offsets() == offsets("-o", "beginning"), "the default start is not the beginning"
    assert offsets("-o", "12") == [(str(i), "r%d" % i) for i in range(12, 15)]
    assert offsets("-o", "-2") == [("13", "r13"), ("14", "r14")]
    assert offsets("-o", "-100") == offsets("-o", "beginning")
    assert offsets("-o", "end") == []
    assert offsets("-o", "@%d" % before) == offsets("-o", "beginning")
    assert offsets("-o", "@%d" % mid) == [(str(i), "r%d" % i) for i in range(10, 15)]
    assert offsets("-o", "@%d" % (int(time.time() * 1000) + 60000)) == []
    out, _ = cli("consume", "cli-offsets", "-o", "3", "-n", "4")  # -n alone ends it
    assert out.splitlines() == ["r3", "r4", "r5", "r6"], out


def produce_json_and_codecs():
    cli("topic", "create", "cli-json", "-p", "2")
    lines = [
        {"key": "a", "value": "first", "headers": {"x": "1"}, "partition": 1},
        {"key": None, "value": {"nested": [1, 2]}, "partition": 0},
        {"value": None, "key": "tombstone", "partition": 1, "headers": [{"key": "d", "value": "1"}, {"key": "d"}]},
        {"key": "ts", "value": "v", "partition": 0, "timestamp": 1600000000000},
    ]
    cli("produce", "cli-json", "--format", "json", input="".join(json.dumps(l) + "\n" for l in lines).encode())
    p1 = kcat_records("cli-json", 1)
    assert [(r["key"], r["payload"]) for r in p1] == [("a", "first"), ("tombstone", None)], p1
    assert p1[0]["headers"] == ["x", "1"], p1[0]
    assert p1[1]["headers"] == ["d", "1", "d", None], p1[1]
    p0 = kcat_records("cli-json", 0)
    assert [(r["key"], r["payload"]) for r in p0] == [(None, '{"nested":[1,2]}'), ("ts", "v")], p0
    assert p0[1]["ts"] == 1600000000000, p0[1]
    _, err = cli("produce", "cli-json", "--format", "json", input=b'{"key": 1, "bogus": 2}\n', expect=2)
    assert "unknown field 'bogus'" in err, err

    cli("topic", "create", "cli-codecs", "-p", "1")
    want = []
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        batch = ["%s-%d-%s" % (codec, i, "z" * (i % 40)) for i in range(200)]
        cli("produce", "cli-codecs", "-z", codec, input="".join(v + "\n" for v in batch).encode())
        want += batch
    cli("produce", "cli-codecs", "--acks", "1", "--no-idempotence", input=b"acks1-a\nacks1-b\n")
    cli("produce", "cli-codecs", "--acks", "0", input=b"acks0\n")
    want += ["acks1-a", "acks1-b", "acks0"]
    got = [r["payload"] for r in kcat_records("cli-codecs", 0)]
    assert got == want, "codec round trip: %d records back, %d sent" % (len(got), len(want))
    out, _ = cli("consume", "cli-codecs", "-e", "-f", "%o:%s\\n")
    assert out.splitlines() == ["%d:%s" % (i, v) for i, v in enumerate(want)]


def produce_many_with_batching():
    """Enough records for many batches over several partitions; each once, in order."""
    cli("topic", "create", "cli-many", "-p", "3")
    n = 50000
    data = "".join("k%d\t%d\n" % (i % 97, i) for i in range(n)).encode()
    cli("produce", "cli-many", "-K", "\t", "-X", "batch.size=16384", "-X", "linger.ms=2", input=data, timeout=120)
    out, _ = cli("consume", "cli-many", "-e", "-f", "%k %s\\n", timeout=120)
    got = [l.split(" ") for l in out.splitlines()]
    assert len(got) == n, "%d records back of %d" % (len(got), n)
    per_key = {}
    for k, v in got:
        per_key.setdefault(k, []).append(int(v))
    for k, vs in per_key.items():
        assert vs == sorted(vs), "key %s out of order" % k
    assert sorted(int(v) for _, v in got) == list(range(n))


def produce_through_a_broker_restart():
    """The broker restarts while `runnel produce` is sending (requests in
    flight, more input arriving): the producer reconnects, retries in
    sequence order, and every record is written exactly once."""
    import threading
    cli("topic", "create", "cli-restart", "-p", "2")
    n = 30000
    p = subprocess.Popen([RUNNEL, "produce", "cli-restart", "-b", BROKER.bootstrap, "-K", ":",
                          "-X", "batch.size=4096", "-X", "linger.ms=1"],
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE)

    def feed():
        for start in range(0, n, 300):
            p.stdin.write(b"".join(b"k%d:v%d\n" % (i % 13, i) for i in range(start, min(n, start + 300))))
            p.stdin.flush()
            time.sleep(0.01)
        p.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    time.sleep(0.3)
    BROKER.restart(graceful=True)
    writer.join(timeout=120)
    assert p.wait(timeout=120) == 0, p.stderr.read()
    out, _ = cli("consume", "cli-restart", "-e", "-f", "%s\\n", timeout=120)
    got = sorted(int(v[1:]) for v in out.split())
    assert got == list(range(n)), "%d records, %d distinct, of %d" % (len(got), len(set(got)), n)


# --- groups ------------------------------------------------------------------

def group_lag_and_reset():
    cli("topic", "create", "cli-grp", "-p", "2")
    cli("produce", "cli-grp", "-p", "0", input="".join("a%d\n" % i for i in range(10)).encode())
    cli("produce", "cli-grp", "-p", "1", input="".join("b%d\n" % i for i in range(6)).encode())
    c = Consumer({"bootstrap.servers": BROKER.bootstrap, "broker.address.family": "v4", "group.id": "cli-g1",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([TopicPartition("cli-grp", 0, 0), TopicPartition("cli-grp", 1, 0)])
    got = {0: 0, 1: 0}
    deadline = time.monotonic() + 30
    while (got[0] < 7 or got[1] < 2) and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        if got[m.partition()] < (7 if m.partition() == 0 else 2):
            got[m.partition()] += 1
    c.commit(offsets=[TopicPartition("cli-grp", 0, 7), TopicPartition("cli-grp", 1, 2)], asynchronous=False)
    c.close()

    d = cli_json("group", "describe", "cli-g1", "-o", "json")
    rows = {(p["topic"], p["partition"]): p for p in d["partitions"]}
    assert rows[("cli-grp", 0)]["current_offset"] == 7 and rows[("cli-grp", 0)]["log_end_offset"] == 10, rows
    assert rows[("cli-grp", 0)]["lag"] == 3, rows
    assert rows[("cli-grp", 1)]["current_offset"] == 2 and rows[("cli-grp", 1)]["lag"] == 4, rows
    assert d["total_lag"] == 7 and d["state"] == "Empty", d
    text, _ = cli("group", "describe", "cli-g1")
    lines = text.splitlines()
    assert lines[0].startswith("GROUP cli-g1  STATE Empty"), lines
    head = lines[1]
    assert head.split()[:5] == ["TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"], head
    lag_col = head.index("LAG")
    assert [l[lag_col:].split()[0] for l in lines[2:]] == ["3", "4"], text

    listed = cli_json("group", "list", "-o", "json")
    assert any(g["group"] == "cli-g1" for g in listed), listed

    out, _ = cli("group", "reset-offsets", "cli-g1", "--topic", "cli-grp", "--to-earliest")
    assert "not committed" in out, out
    assert cli_json("group", "describe", "cli-g1", "-o", "json")["total_lag"] == 7, "a dry run committed"
    cli("group", "reset-offsets", "cli-g1", "--topic", "cli-grp", "--to-earliest", "--execute")
    d = cli_json("group", "describe", "cli-g1", "-o", "json")
    assert [p["current_offset"] for p in d["partitions"]] == [0, 0] and d["total_lag"] == 16, d
    cli("group", "reset-offsets", "cli-g1", "--topic", "cli-grp", "-p", "1", "--to-offset", "100", "--execute")
    cli("group", "reset-offsets", "cli-g1", "--topic", "cli-grp", "-p", "0", "--to-offset", "4", "--execute")
    d = cli_json("group", "describe", "cli-g1", "-o", "json")
    assert [p["current_offset"] for p in d["partitions"]] == [4, 6], d  # 100 clamps to the log end
    # confluent-kafka sees the same commits.
    c = Consumer({"bootstrap.servers": BROKER.bootstrap, "broker.address.family": "v4", "group.id": "cli-g1"})
    committed = c.committed([TopicPartition("cli-grp", 0), TopicPartition("cli-grp", 1)], timeout=30)
    c.close()
    assert [tp.offset for tp in committed] == [4, 6], committed

    # A group member of runnel's own: reads from the commits to the end, commits, leaves.
    out, _ = cli("consume", "cli-grp", "-G", "cli-g1", "-e", "-f", "%p:%s\\n", timeout=90)
    assert sorted(out.splitlines()) == sorted(["0:a%d" % i for i in range(4, 10)]), out
    d = cli_json("group", "describe", "cli-g1", "-o", "json")
    assert d["total_lag"] == 0 and d["state"] == "Empty", d
    # A fresh group with -o beginning reads everything and commits the end.
    out, _ = cli("consume", "cli-grp", "-G", "cli-g2", "-o", "beginning", "-e", timeout=90)
    assert len(out.splitlines()) == 16, out
    assert cli_json("group", "describe", "cli-g2", "-o", "json")["total_lag"] == 0

    out, _ = cli("group", "delete", "cli-g1", "cli-g2")
    assert "deleted group cli-g1" in out and "deleted group cli-g2" in out, out
    _, err = cli("group", "describe", "cli-g1", expect=1)
    assert "GROUP_ID_NOT_FOUND (69)" in err, err


def wait_for(what, fn, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.3)


def group_member_while_kcat_holds_partitions():
    """kcat -G and runnel consume -G in one group split the partitions (range),
    each reads only what it holds, and runnel's member leaves on SIGTERM.
    Both start at the beginning where the group has no commit: the records
    come after the split, and "latest" would race with them."""
    cli("topic", "create", "cli-shared", "-p", "4")

    def holders():
        p = subprocess.run([RUNNEL, "group", "describe", "cli-g3", "-o", "json", "-b", BROKER.bootstrap],
                           capture_output=True, timeout=60)
        if p.returncode == 1 and b"GROUP_ID_NOT_FOUND" in p.stderr:
            return None  # kcat has not joined yet
        assert p.returncode == 0, p.stderr
        d = json.loads(p.stdout)
        if d["state"] != "Stable":
            return None
        by_client = {}
        for p in d["partitions"]:
            if p["client_id"]:
                by_client.setdefault(p["client_id"], set()).add(p["partition"])
        return by_client

    k = subprocess.Popen(["kcat", "-b", BROKER.bootstrap, "-X", "broker.address.family=v4", "-G", "cli-g3",
                          "-X", "client.id=kcat-member",
                          "-X", "auto.offset.reset=earliest", "-f", "%p\\n", "cli-shared"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    r = None
    try:
        wait_for("kcat to hold every partition", lambda: holders() == {"kcat-member": {0, 1, 2, 3}})
        r = subprocess.Popen([RUNNEL, "consume", "cli-shared", "-b", BROKER.bootstrap, "-G", "cli-g3",
                              "-X", "client.id=runnel-member", "-o", "beginning", "-f", "%p\\n"], stdout=subprocess.PIPE)
        split = wait_for("the two members to share the partitions",
                         lambda: (lambda h: h if h and len(h) == 2 else None)(holders()))
        assert split["runnel-member"] | split["kcat-member"] == {0, 1, 2, 3}, split
        assert len(split["runnel-member"]) == 2 and len(split["kcat-member"]) == 2, split
        cli("produce", "cli-shared", "-K", ":", input="".join("k%d:v%d\n" % (i, i) for i in range(40)).encode())
        want = {p: sum(1 for i in range(40) if key_partition("k%d" % i, 4) == p) for p in range(4)}
        last = {}

        def all_read():
            last["describe"] = cli_json("group", "describe", "cli-g3", "-o", "json")
            committed = {p["partition"]: p["current_offset"] for p in last["describe"]["partitions"]}
            return all(committed.get(p) == n for p, n in want.items() if n)

        try:
            wait_for("both members to commit every record", all_read)
        except AssertionError:
            raise AssertionError("want %s, last describe %s" % (want, last.get("describe")))
        r.terminate()
        out, _ = r.communicate(timeout=30)
        assert r.returncode == 0, r.returncode
        got = [int(x) for x in out.decode().split()]
        assert sorted(got) == sorted(p for p in split["runnel-member"] for _ in range(want[p])), (got, split, want)
        # It left: kcat gets every partition back without waiting for a session timeout.
        wait_for("kcat to hold every partition again", lambda: holders() == {"kcat-member": {0, 1, 2, 3}}, timeout=30)
    finally:
        if r and r.poll() is None:
            r.kill()
            r.wait(timeout=30)
        k.terminate()
        k.wait(timeout=30)


# --- cluster -------------------------------------------------------------------

def cluster_info_and_health():
    info = cli_json("cluster", "info", "-o", "json")
    a = admin()
    md = a.list_topics(timeout=30)
    assert info["cluster_id"] == md.cluster_id and info["controller_id"] == 1, (info, md.cluster_id)
    assert info["brokers"] == [{"id": 1, "host": "127.0.0.1", "port": BROKER.port, "rack": None}], info
    text, _ = cli("cluster", "info")
    assert text.splitlines()[0] == "CLUSTER %s  CONTROLLER 1  BROKERS 1" % md.cluster_id, text
    out, _ = cli("cluster", "health")
    assert out.startswith("healthy: 1 brokers"), out
    h = cli_json("cluster", "health", "-o", "json")
    assert h["healthy"] is True and h["problems"] == [] and h["partitions"] > 0, h


def main():
    global RUNNEL, BROKER
    RUNNEL = runnel_binary()
    overrides = {"auto.create.topics.enable": "false", "group.initial.rebalance.delay.ms": "0"}
    if "--kafka" in sys.argv:
        import kafka_harness
        broker = kafka_harness.Kafka(sys.argv[sys.argv.index("--kafka") + 1], overrides=overrides)
    else:
        broker = Runnel(overrides=overrides)
    with broker:
        BROKER = broker
        rc = run_tests([
            ("topic create/list/describe/alter-config/add-partitions/delete", topic_lifecycle),
            ("errors name the Kafka code; exit codes 1, 2, 3; --help", error_paths),
            ("produce -K -H: kcat reads it back; keys where murmur2 and librdkafka put them", produce_keys_and_headers),
            ("consume -f prints exactly what kcat -f prints", consume_formats_match_kcat),
            ("consume -o beginning/end/N/-N/@ts, -n", consume_start_offsets),
            ("produce --format json, every codec, acks 1 and 0", produce_json_and_codecs),
            ("50,000 records in many batches: each once, in key order", produce_many_with_batching),
            ("produce through a broker restart: every record once", produce_through_a_broker_restart),
            ("group describe lag, reset-offsets, consume -G, delete", group_lag_and_reset),
            ("runnel consume -G shares a group with kcat -G", group_member_while_kcat_holds_partitions),
            ("cluster info and health", cluster_info_and_health),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
