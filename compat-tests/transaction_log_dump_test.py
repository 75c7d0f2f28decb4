#!/usr/bin/python3
"""Kafka's own kafka.tools.DumpLogSegments --transaction-log-decoder reads
the __transaction_state segments Runnel wrote (issue 16), and they hold the
same transaction states Apache Kafka 4.1.1 writes for the same sequence.

The sequence, with librdkafka's transactional producer (Debian's
confluent-kafka, librdkafka 2.0.2) on a topic of two partitions:
- "dump-commit-abort": a transaction over both partitions committed, then
  one on partition 0 aborted;
- "dump-fence": a transaction left open on partition 0 by a producer that a
  second producer with the same transactional.id fences (its InitProducerId
  aborts the open transaction), then the second's transaction on partition 1
  committed;
- "dump-timeout": a transaction on partition 0 with transaction.timeout.ms
  3000, aborted by the coordinator (cleanup interval 500 ms).
Each id has its own transaction.timeout.ms. After every transaction is
complete (DescribeTransactions, bounded) the broker is stopped gracefully
and DumpLogSegments decodes every __transaction_state segment: no
complaint, every batch valid, every record a transaction log key and value.
Per transactional id the decoded states, partitions, epochs and timeouts
are checked against the sequence (producer id and epoch as DescribeTransactions
showed them after InitProducerId), and then compared with what Kafka 4.1.1
(kafka_harness) writes for the same sequence at the same feature level:
Kafka 4.1.1 formatted at its defaults, which finalize transaction.version 2
as Runnel does (Kafka's TransactionVersion: TV_0 writes TransactionLogValue
version 0, TV_1 and up version 1 with the clientTransactionVersion tag;
librdkafka 2.0.2 speaks protocol v1, so its transactions keep their epoch
at EndTxn on both brokers). Every decoded value field,
the value's version and its tagged fields (clientTransactionVersion) too,
equal except for the timestamps and the absolute producer ids (each
broker's ids are numbered in order of appearance) and epochs (relative to
the id's first); consecutive Ongoing records count as their last (how many
AddPartitionsToTxn librdkafka sends is timing).

usage: transaction_log_dump_test.py <path to runnel> <kafka jar cache dir>
"""
import glob
import json
import os
import re
import subprocess
import sys
import time

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kafka_harness  # noqa: E402
import kafka_wire as w  # noqa: E402
from runnel_harness import Runnel, run_tests  # noqa: E402
from transactions_test import parse_describe_transactions_v0, describe_transactions_v0  # noqa: E402

TOPIC = "txn-dumped"
COMMIT_ABORT, FENCE, TIMEOUT = "dump-commit-abort", "dump-fence", "dump-timeout"
TIMEOUTS = {COMMIT_ABORT: 20000, FENCE: 25000, TIMEOUT: 3000}
OVERRIDES = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
             "transaction.state.log.num.partitions": "4", "group.initial.rebalance.delay.ms": "0"}

_RECORD = re.compile(r"^\| offset: (\d+) .* key: (.*) payload: (.*)$")
TP0, TP1 = "%s-0" % TOPIC, "%s-1" % TOPIC


def describe(broker, ids):
    with w.Connection(broker.port) as c:
        return parse_describe_transactions_v0(c.call(describe_transactions_v0(1, ids), 1))


def producer(broker, txn_id):
    p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id, "linger.ms": 5,
                  "transaction.timeout.ms": TIMEOUTS[txn_id]})
    p.init_transactions(30)
    error, state, timeout, pid, epoch, _ = describe(broker, [txn_id])[txn_id]
    assert (error, state, timeout) == (0, "Empty", TIMEOUTS[txn_id]), (txn_id, error, state, timeout)
    return p, (pid, epoch)


def send(p, partition, n=2):
    for i in range(n):
        p.produce(TOPIC, value=b"v%d" % i, partition=partition)
    assert p.flush(30) == 0, "records left unsent"


def wait_complete(broker, ids, timeout=30):
    """Until no id is Ongoing or Prepare*: the coordinator wrote its last state."""
    deadline = time.monotonic() + timeout
    while True:
        got = describe(broker, ids)
        states = {i: got[i][1] for i in ids}
        if all(s in ("Empty", "CompleteCommit", "CompleteAbort") for s in states.values()):
            return states
        assert time.monotonic() < deadline, "transactions not complete: %s" % states
        time.sleep(0.1)


def run_sequence(broker):
    """Drives the transactions; returns {id: [(producer id, epoch) after each InitProducerId]}."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(TOPIC, 2, 1)], operation_timeout=30).values():
        f.result(timeout=30)
    inits = {}

    p, init = producer(broker, COMMIT_ABORT)
    inits[COMMIT_ABORT] = [init]
    p.begin_transaction()
    send(p, 0)
    send(p, 1)
    p.commit_transaction(30)
    p.begin_transaction()
    send(p, 0)
    p.abort_transaction(30)

    old, init = producer(broker, FENCE)
    inits[FENCE] = [init]
    old.begin_transaction()
    send(old, 0)
    new, init = producer(broker, FENCE)  # aborts old's transaction, fences old
    inits[FENCE].append(init)
    try:
        old.commit_transaction(10)
    except KafkaException:
        pass
    else:
        raise AssertionError("the fenced producer committed")
    new.begin_transaction()
    send(new, 1)
    new.commit_transaction(30)

    stuck, init = producer(broker, TIMEOUT)
    inits[TIMEOUT] = [init]
    stuck.begin_transaction()
    send(stuck, 0)
    deadline = time.monotonic() + 30
    while describe(broker, [TIMEOUT])[TIMEOUT][1] != "CompleteAbort":
        assert time.monotonic() < deadline, "the timed-out transaction was not aborted"
        time.sleep(0.2)
    states = wait_complete(broker, list(TIMEOUTS))
    assert states == {COMMIT_ABORT: "CompleteAbort", FENCE: "CompleteCommit", TIMEOUT: "CompleteAbort"}, states
    return inits


def dump_transaction_log(classpath, data_dir):
    """Every decoded record of the non-empty __transaction_state segments, by segment, in log order."""
    segments = [s for s in sorted(glob.glob(os.path.join(data_dir, "__transaction_state-*", "*.log")))
                if os.path.getsize(s) > 0]
    assert segments, "no __transaction_state segment in " + data_dir
    out = subprocess.run(["java", "-Dlog4j2.level=ERROR", "-cp", classpath, "kafka.tools.DumpLogSegments",
                          "--transaction-log-decoder", "--files", ",".join(segments)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, "DumpLogSegments exited %d: %s" % (out.returncode, out.stderr)
    bad = [line for line in (out.stdout + out.stderr).splitlines()
           if re.search(r"exception|error|corrupt|invalid|unknown|found", line, re.I)
           and not line.startswith(("| offset", "Dumping "))]  # not the records' and paths' own text
    assert not bad, "DumpLogSegments complained:\n" + "\n".join(bad)
    records = []
    seg = None
    per_segment = {}
    for line in out.stdout.splitlines():
        if line.startswith("Dumping "):
            seg = line[len("Dumping "):].strip()
            per_segment[seg] = 0
        elif line.startswith("baseOffset:"):
            assert "isvalid: true" in line, "invalid batch in %s: %s" % (seg, line)
        elif line.startswith("| offset:"):
            m = _RECORD.match(line)
            assert m, "a record without a decoded key and payload in %s: %s" % (seg, line)
            key = json.loads(m.group(2))
            payload = None if m.group(3) == "<DELETE>" else json.loads(m.group(3))
            records.append((seg, key, payload, line))
            per_segment[seg] += 1
    assert sorted(per_segment) == segments, (sorted(per_segment), segments)
    empty = [s for s, n in per_segment.items() if n == 0]
    assert not empty, "no records decoded from %s" % empty
    return records


def by_id(records):
    """{transactional id: [(key, payload, line)]} in log order; one partition per id."""
    out, where = {}, {}
    for seg, key, payload, line in records:
        assert key["type"] == "0", "not a transaction log key: " + line
        tid = key["data"]["transactionalId"]
        out.setdefault(tid, []).append((key, payload, line))
        where.setdefault(tid, set()).add(os.path.dirname(seg))
    spread = {t: s for t, s in where.items() if len(s) > 1}
    assert not spread, "an id's records span partitions: %s" % spread
    return out


# TransactionState's ids, as DumpLogSegments prints transactionStatus.
STATES = ["EMPTY", "ONGOING", "PREPARE_COMMIT", "PREPARE_ABORT", "COMPLETE_COMMIT", "COMPLETE_ABORT", "DEAD",
          "PREPARE_EPOCH_FENCE"]


def status(payload):
    return STATES[payload["data"]["transactionStatus"]]


def partitions(payload):
    return sorted("%s-%d" % (t["topic"], p) for t in payload["data"]["transactionPartitions"] or [] for p in t["partitionIds"])


def check_own(records, inits):
    """The states each id went through, as the sequence drove them."""
    ids = by_id(records)
    assert sorted(ids) == sorted(TIMEOUTS), sorted(ids)
    for tid, rows in ids.items():
        for _, payload, line in rows:
            assert payload is not None, "tombstone for a live id: " + line
            assert payload["data"]["transactionTimeoutMs"] == TIMEOUTS[tid], line
    summary = {tid: [(status(p), partitions(p)) for _, p, _ in rows] for tid, rows in ids.items()}

    def states(tid):
        return [s for s, _ in summary[tid]]

    def collapse(seq):  # consecutive repeats (a state rewritten, e.g. Ongoing with a partition more) as one
        return [s for i, s in enumerate(seq) if i == 0 or seq[i - 1] != s]

    # commit over two partitions, then abort on one.
    ca = summary[COMMIT_ABORT]
    assert collapse(states(COMMIT_ABORT)) == ["EMPTY", "ONGOING", "PREPARE_COMMIT", "COMPLETE_COMMIT", "ONGOING",
                                             "PREPARE_ABORT", "COMPLETE_ABORT"], summary[COMMIT_ABORT]
    prepares = [parts for s, parts in ca if s.startswith("PREPARE")]
    assert prepares == [[TP0, TP1], [TP0]], ca
    ongoing = [parts for s, parts in ca if s == "ONGOING"]
    assert ongoing[-1] == [TP0] and [TP0, TP1] in ongoing, ca
    assert all(parts == [] for s, parts in ca if s in ("EMPTY", "COMPLETE_COMMIT", "COMPLETE_ABORT")), ca
    pid, epoch = inits[COMMIT_ABORT][0]
    for _, p, line in ids[COMMIT_ABORT]:
        assert (p["data"]["producerId"], p["data"]["producerEpoch"]) == (pid, epoch), (line, pid, epoch)

    # the fenced producer's transaction aborted by the second InitProducerId, then a commit.
    fs = collapse(states(FENCE))
    assert fs[:4] == ["EMPTY", "ONGOING", "PREPARE_ABORT", "COMPLETE_ABORT"], summary[FENCE]
    assert fs[-4:] == ["EMPTY", "ONGOING", "PREPARE_COMMIT", "COMPLETE_COMMIT"], summary[FENCE]
    (pid1, epoch1), (pid2, epoch2) = inits[FENCE]
    # the abort of the fenced transaction bumps the epoch, the InitProducerId after it once more.
    assert (pid2, epoch2) == (pid1, epoch1 + 2), inits[FENCE]
    aborts = [p["data"]["producerEpoch"] for _, p, _ in ids[FENCE] if status(p) in ("PREPARE_ABORT", "COMPLETE_ABORT")]
    assert aborts == [epoch1 + 1, epoch1 + 1], summary[FENCE]
    first, last = ids[FENCE][0][1]["data"], ids[FENCE][-1][1]["data"]
    assert (first["producerId"], first["producerEpoch"]) == (pid1, epoch1), first
    assert (last["producerId"], last["producerEpoch"]) == (pid2, epoch2), last
    assert [parts for s, parts in summary[FENCE] if s.startswith("PREPARE")] == [[TP0], [TP1]], summary[FENCE]

    # the coordinator's abort of a timed-out transaction.
    assert collapse(states(TIMEOUT)) == ["EMPTY", "ONGOING", "PREPARE_ABORT", "COMPLETE_ABORT"], summary[TIMEOUT]
    assert [parts for s, parts in summary[TIMEOUT] if s.startswith("PREPARE")] == [[TP0]], summary[TIMEOUT]
    pid, epoch = inits[TIMEOUT][0]
    assert ids[TIMEOUT][0][1]["data"]["producerId"] == pid, ids[TIMEOUT][0][2]
    # the coordinator's abort fences the producer that went quiet: the epoch is bumped.
    epochs = [(status(p), p["data"]["producerId"], p["data"]["producerEpoch"]) for _, p, _ in ids[TIMEOUT]]
    assert [e for s, _, e in epochs if s.endswith("ABORT")] == [epoch + 1, epoch + 1], epochs
    assert all(i == pid for _, i, _ in epochs), epochs
    return ids


def ongoing_merged(rows):
    """Consecutive Ongoing records as their last: how many AddPartitionsToTxn the
    client sends for one transaction's partitions depends on its timing."""
    return [r for i, r in enumerate(rows)
            if not (i + 1 < len(rows) and status(r[1]) == "ONGOING" and status(rows[i + 1][1]) == "ONGOING")]


_TIMESTAMPS = ("transactionLastUpdateTimestampMs", "transactionStartTimestampMs")


def normalized(ids):
    """Per id, each decoded value without timestamps, producer ids numbered in
    order of appearance (-1 kept) and epochs relative to the id's first."""
    numbers = {}

    def number(pid):
        if pid < 0:
            return pid
        return "pid%d" % numbers.setdefault(pid, len(numbers))

    out = {}
    for tid in sorted(ids):
        rows = []
        base = ids[tid][0][1]["data"]["producerEpoch"]
        for key, payload, _ in ongoing_merged(ids[tid]):
            v = {"version": payload["version"]}
            for k, x in payload["data"].items():
                if k in _TIMESTAMPS:
                    continue
                if k.endswith("ProducerId") or k == "producerId":
                    x = number(x)
                elif k.endswith("ProducerEpoch") or k == "producerEpoch":
                    x = x if x < 0 else x - base
                elif k == "transactionPartitions":
                    x = None if x is None else sorted((t["topic"], sorted(t["partitionIds"])) for t in x)
                v[k] = x
            rows.append(json.dumps(v, sort_keys=True))
        out[tid] = rows
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    classpath = kafka_harness.kafka_classpath(sys.argv[2])
    found = {}

    with Runnel(sys.argv[1], OVERRIDES) as r:
        state = {}

        def sequence():
            state["inits"] = run_sequence(r)

        def decoded():
            rc = r.stop()
            assert rc == 0, "graceful stop exited with %s" % rc
            records = dump_transaction_log(classpath, r.log_dir)
            found["runnel"] = check_own(records, state["inits"])
            print("DumpLogSegments decoded %d records of Runnel's __transaction_state" % len(records))

        def same_as_kafka():
            assert "runnel" in found, "Runnel's log was not decoded"
            with kafka_harness.Kafka(sys.argv[2], OVERRIDES) as k:
                inits = run_sequence(k)
                k.stop()
                records = dump_transaction_log(classpath, k.log_dir)
            kafka_ids = check_own(records, inits)
            ours, theirs = normalized(found["runnel"]), normalized(kafka_ids)
            diff = []
            for tid in sorted(TIMEOUTS):
                if ours[tid] != theirs[tid]:
                    fields = []
                    for i, (a, b) in enumerate(zip(ours[tid], theirs[tid])):
                        a, b = json.loads(a), json.loads(b)
                        fields += ["record %d %s: runnel %s, kafka %s" % (i, f, a.get(f, "(absent)"), b.get(f, "(absent)"))
                                   for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)]
                    if len(ours[tid]) != len(theirs[tid]):
                        fields.append("records: runnel %d, kafka %d" % (len(ours[tid]), len(theirs[tid])))
                    diff.append("%s differs:\n  %s" % (tid, "\n  ".join(fields)))
                    diff.append("%s:\n  runnel:\n    %s\n  kafka:\n    %s" % (
                        tid, "\n    ".join(ours[tid]), "\n    ".join(theirs[tid])))
                    diff.append("  runnel lines:\n    " + "\n    ".join(l for _, _, l in found["runnel"][tid]))
                    diff.append("  kafka lines:\n    " + "\n    ".join(l for _, _, l in kafka_ids[tid]))
            assert not diff, "Runnel's transaction log differs from Kafka 4.1.1's:\n" + "\n".join(diff)

        rc = run_tests([("transactions committed, aborted, fenced, timed out", sequence),
                        ("DumpLogSegments --transaction-log-decoder reads __transaction_state", decoded),
                        ("the same states as Kafka 4.1.1 writes", same_as_kafka)], r)
    sys.exit(rc)


if __name__ == "__main__":
    main()
