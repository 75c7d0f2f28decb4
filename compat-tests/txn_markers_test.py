#!/usr/bin/python3
"""Transaction markers on one broker: WriteTxnMarkers (API 27, sent here as a
transaction coordinator sends it) and DescribeProducers (API 61, through
Kafka 4.1.1's kafka-transactions.sh).

A COMMIT and an ABORT marker are appended to a partition that holds an
idempotent producer's records; they take an offset each and readers skip
them: librdkafka consumers at read_committed and read_uncommitted get every
data record and none of the markers. A marker from an older coordinator
epoch is TRANSACTION_COORDINATOR_FENCED and appends nothing; an unknown
partition is UNKNOWN_TOPIC_OR_PARTITION. kafka-transactions.sh
describe-producers lists each producer's epoch, coordinator epoch and last
sequence, the same after a graceful restart and after a SIGKILL (producer
snapshots and the log replay carry the markers), and the fencing still
holds then. Kafka's DumpLogSegments decodes the control batches as
endTxnMarker COMMIT/ABORT with their coordinator epochs, and reads the
.txnindex entry of a transaction librdkafka aborted.

usage: txn_markers_test.py <path to runnel> <kafka jar cache dir>
"""
import glob
import os
import re
import subprocess
import sys

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_harness  # noqa: E402
import kafka_wire as w  # noqa: E402
from runnel_harness import Runnel, run_tests  # noqa: E402

TOPIC = "markers"
TXN_PRODUCER = 4242
NONE, UNKNOWN_TOPIC_OR_PARTITION, TRANSACTION_COORDINATOR_FENCED = 0, 3, 52


def write_txn_markers_v1(correlation_id, markers):
    """markers: [(producer_id, producer_epoch, commit, {topic: [partitions]}, coordinator_epoch)]."""
    items = []
    for pid, epoch, commit, topics, coordinator_epoch in markers:
        ts = [w.compact_string(t) + w.compact_array([w.i32(p) for p in ps]) + w.TAGS for t, ps in topics.items()]
        items.append(w.i64(pid) + w.i16(epoch) + w.i8(1 if commit else 0) + w.compact_array(ts)
                     + w.i32(coordinator_epoch) + w.TAGS)
    return w.request(27, 1, correlation_id, w.compact_array(items) + w.TAGS, flexible=True)


def parse_write_txn_markers_v1(body):
    """-> {(producer_id, topic, partition): error}"""
    r = w.Reader(body)
    r.skip_tags()  # response header v1

    def partition(r):
        index, error = r.i32(), r.i16()
        r.skip_tags()
        return index, error

    def topic(r):
        name = r.compact_string()
        parts = r.compact_array(partition)
        r.skip_tags()
        return name, parts

    def marker(r):
        pid = r.i64()
        topics = r.compact_array(topic)
        r.skip_tags()
        return pid, topics

    markers = r.compact_array(marker)
    r.skip_tags()
    assert r.done(), "trailing bytes in WriteTxnMarkers response"
    return {(pid, t, p): e for pid, topics in markers for t, parts in topics for p, e in parts}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    classpath = kafka_harness.kafka_classpath(sys.argv[2])
    correlation = iter(range(100, 10_000))

    def markers(r, *spec):
        with w.Connection(r.port) as conn:
            cid = next(correlation)
            return parse_write_txn_markers_v1(conn.call(write_txn_markers_v1(cid, list(spec)), cid))

    def end_offset(r):
        c = Consumer({"bootstrap.servers": r.bootstrap, "group.id": "unused"})
        try:
            return c.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=15)[1]
        finally:
            c.close()

    def read_all(r, isolation, expected):
        c = Consumer({"bootstrap.servers": r.bootstrap, "group.id": "markers-" + isolation,
                      "isolation.level": isolation, "enable.auto.commit": False})
        got = []
        try:
            c.assign([TopicPartition(TOPIC, 0, 0)])
            for _ in range(100):
                m = c.poll(0.2)
                if m is not None and not m.error():
                    got.append((m.offset(), m.value()))
                if len(got) >= len(expected):
                    break
            extra = c.poll(1.0)  # nothing after them: the markers are not records
            assert extra is None or extra.error(), "unexpected record at %d" % extra.offset()
        finally:
            c.close()
        assert got == expected, "%s read %s, expected %s" % (isolation, got, expected)

    def describe_producers(r):
        out = subprocess.run(["java", "-Dlog4j2.level=ERROR", "-cp", classpath,
                              "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", r.bootstrap,
                              "describe-producers", "--topic", TOPIC, "--partition", "0"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, "kafka-transactions describe-producers exited %d: %s%s" % (
            out.returncode, out.stdout, out.stderr)
        lines = [line.split() for line in out.stdout.splitlines() if line.strip()]
        header = lines[0]
        assert header[:4] == ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence"], out.stdout
        return {int(row[0]): dict(zip(header, row)) for row in lines[1:]}

    with Runnel(sys.argv[1]) as r:
        state = {}

        def setup():
            admin = AdminClient({"bootstrap.servers": r.bootstrap})
            admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(15)
            p = Producer({"bootstrap.servers": r.bootstrap, "enable.idempotence": True, "linger.ms": 0})
            for i in range(3):
                p.produce(TOPIC, value=b"before-%d" % i, partition=0)
                p.flush(15)  # one batch each: sequences 0, 1, 2
            state["producer"] = p
            assert end_offset(r) == 3

        def markers_take_an_offset_each():
            got = markers(r, (TXN_PRODUCER, 0, True, {TOPIC: [0]}, 3),
                          (TXN_PRODUCER + 1, 5, False, {TOPIC: [0]}, 7))
            assert got == {(TXN_PRODUCER, TOPIC, 0): NONE, (TXN_PRODUCER + 1, TOPIC, 0): NONE}, got
            assert end_offset(r) == 5
            p = state["producer"]
            p.produce(TOPIC, value=b"after", partition=0)
            p.flush(15)
            assert end_offset(r) == 6

        def refused_markers_append_nothing():
            got = markers(r, (TXN_PRODUCER, 0, True, {TOPIC: [0], "no-such-topic": [0]}, 2))
            assert got == {(TXN_PRODUCER, TOPIC, 0): TRANSACTION_COORDINATOR_FENCED,
                           (TXN_PRODUCER, "no-such-topic", 0): UNKNOWN_TOPIC_OR_PARTITION}, got
            assert end_offset(r) == 6

        expected = [(0, b"before-0"), (1, b"before-1"), (2, b"before-2"), (5, b"after")]

        def readers_skip_markers():
            read_all(r, "read_committed", expected)
            read_all(r, "read_uncommitted", expected)

        def producers_described(when):
            def check():
                producers = describe_producers(r)
                txn = producers.get(TXN_PRODUCER)
                assert txn and txn["ProducerEpoch"] == "0" and txn["LatestCoordinatorEpoch"] == "3", producers
                aborted = producers.get(TXN_PRODUCER + 1)
                assert aborted and aborted["ProducerEpoch"] == "5" and aborted["LatestCoordinatorEpoch"] == "7"
                idempotent = [v for k, v in producers.items() if k not in (TXN_PRODUCER, TXN_PRODUCER + 1)]
                assert len(idempotent) == 1 and idempotent[0]["LastSequence"] == "3", producers
                assert all(v["CurrentTransactionStartOffset"] == "None" for v in producers.values()), producers
            return ("kafka-transactions describe-producers " + when, check)

        def fenced_after(graceful):
            def check():
                state["producer"].flush(15)
                r.restart(graceful=graceful)
                got = markers(r, (TXN_PRODUCER, 0, True, {TOPIC: [0]}, 1))
                assert got == {(TXN_PRODUCER, TOPIC, 0): TRANSACTION_COORDINATOR_FENCED}, got
                assert end_offset(r) == 6
                read_all(r, "read_committed", expected)
            return check

        def dump_log_segments():
            segs = sorted(glob.glob(os.path.join(r.log_dir, TOPIC + "-0", "*.log")))
            text = ""
            for seg in segs:
                out = subprocess.run(["java", "-Dlog4j2.level=ERROR", "-cp", classpath, "kafka.tools.DumpLogSegments",
                                      "--files", seg, "--deep-iteration"], capture_output=True, text=True, timeout=120)
                assert out.returncode == 0, "DumpLogSegments exited %d: %s" % (out.returncode, out.stderr)
                text += out.stdout
            found = re.findall(r"offset: (\d+) .*endTxnMarker: (COMMIT|ABORT) coordinatorEpoch: (\d+)", text)
            assert found == [("3", "COMMIT", "3"), ("4", "ABORT", "7")], "%s\n%s" % (found, text)
            controls = [line for line in text.splitlines() if line.startswith("baseOffset:") and "isControl: true" in line]
            assert len(controls) == 2 and all("isTransactional: true" in c and "isvalid: true" in c for c in controls), text

        def txn_index_read_by_kafka():
            # A librdkafka transaction aborted, then one committed: the abort's
            # .txnindex entry, as Kafka's DumpLogSegments reads the file.
            topic = "aborted"
            admin = AdminClient({"bootstrap.servers": r.bootstrap})
            admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
            p = Producer({"bootstrap.servers": r.bootstrap, "transactional.id": "txnindex", "linger.ms": 0})
            p.init_transactions(30)
            for commit in (False, True):
                p.begin_transaction()
                for i in range(3):
                    p.produce(topic, value=b"v%d" % i, partition=0)
                p.flush(15)
                (p.commit_transaction if commit else p.abort_transaction)(30)
            index = os.path.join(r.log_dir, topic + "-0", "%020d.txnindex" % 0)
            assert os.path.exists(index), os.listdir(os.path.dirname(index))
            out = subprocess.run(["java", "-Dlog4j2.level=ERROR", "-cp", classpath, "kafka.tools.DumpLogSegments",
                                  "--files", index], capture_output=True, text=True, timeout=120)
            assert out.returncode == 0, "DumpLogSegments exited %d: %s" % (out.returncode, out.stderr)
            found = re.findall(r"version: (\d+) producerId: (\d+) firstOffset: (\d+) lastOffset: (\d+) "
                               r"lastStableOffset: (\d+)", out.stdout)
            assert len(found) == 1, out.stdout
            version, _, first, last, lso = found[0]
            # Records 0-2, the ABORT marker at 3; nothing else open, so stable after it.
            assert (version, first, last, lso) == ("0", "0", "3", "4"), out.stdout

        try:
            rc = run_tests([
                ("an idempotent producer writes three batches", setup),
                ("COMMIT and ABORT markers take an offset each", markers_take_an_offset_each),
                ("a fenced coordinator's marker and an unknown partition append nothing", refused_markers_append_nothing),
                ("read_committed and read_uncommitted consumers skip the markers", readers_skip_markers),
                producers_described("lists every producer's epochs"),
                ("after a graceful restart the fencing holds", fenced_after(True)),
                producers_described("after a graceful restart"),
                ("after a SIGKILL the fencing holds", fenced_after(False)),
                producers_described("after a SIGKILL"),
                ("DumpLogSegments decodes the markers", dump_log_segments),
                ("DumpLogSegments reads an aborted transaction's .txnindex entry", txn_index_read_by_kafka),
            ], r)
        finally:
            if "producer" in state:
                state["producer"].flush(5)
    sys.exit(rc)


if __name__ == "__main__":
    main()
