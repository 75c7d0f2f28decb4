"""Produce names every refused record (KIP-467), from hand-built requests
(issue 12, defect 13).

Kafka's LogValidator checks each record and lists every one at fault by
its batch index: a keyless record on a compacted topic (INVALID_RECORD),
a CreateTime outside message.timestamp.before/after.max.ms
(INVALID_TIMESTAMP), so a client fails exactly those records. Runnel used
to name only the first (and none for timestamps), and answered log start
offset -1 where Kafka gives the partition's real one.
"""

import sys
import time

import kafka_wire as w
from runnel_harness import Runnel, run_tests

COMPACTED = "compacted"
BOUNDED = "bounded-time"
HOUR = 3_600_000
INVALID_RECORD, INVALID_TIMESTAMP = 87, 32
LOG_START = 3  # DeleteRecords moves each partition's log start here first


def now_ms():
    return int(time.time() * 1000)


class RecordErrors:
    def __init__(self, broker):
        self.c = w.Connection(broker.port)
        topics = [(COMPACTED, 1, 1, {"cleanup.policy": "compact,delete"}),
                  (BOUNDED, 1, 1, {"message.timestamp.before.max.ms": str(HOUR)})]
        out = w.parse_create_topics_v4(self.c.call(w.create_topics_v4(1, topics), 1))
        assert [e for _, e, _ in out] == [0, 0], out
        for topic in (COMPACTED, BOUNDED):
            batch = w.record_batch([(b"k%d" % i, b"v", ()) for i in range(5)], now_ms())
            assert self.produce(topic, batch)[0] == 0
            res = w.parse_delete_records_v1(self.c.call(w.delete_records_v1(3, topic, [(0, LOG_START)]), 3))
            assert res == {(topic, 0): (0, LOG_START)}, res

    def produce(self, topic, batch):
        res = w.parse_produce_v8(self.c.call(w.produce_v8(2, -1, {topic: [(0, batch)]}), 2), detail=True)
        return res[(topic, 0)]

    def keyless_records_on_a_compacted_topic(self):
        keyless = set(range(5, 100, 10))  # 10 of 100
        records = [(None if i in keyless else b"key-%d" % i, b"value-%d" % i, ()) for i in range(100)]
        err, base, message, log_start, record_errors = self.produce(COMPACTED, w.record_batch(records, now_ms()))
        assert (err, base, log_start) == (INVALID_RECORD, -1, LOG_START), (err, base, log_start, message)
        why = "Compacted topic cannot accept message without key in topic partition %s-0." % COMPACTED
        assert record_errors == [(i, why) for i in sorted(keyless)], record_errors
        shown = ", ".join("RecordError(batchIndex=%d, message='%s')" % (i, why) for i in sorted(keyless)[:3])
        assert message == ("One or more records have been rejected due to 10 record errors in total, and only "
                           "showing the first three errors at most: [%s]" % shown), message

    def timestamps_out_of_range(self):
        # Odd records two hours old (message.timestamp.before.max.ms is one
        # hour), even ones now.
        now = now_ms()
        deltas = [0 if i % 2 else 2 * HOUR for i in range(20)]
        batch = w.record_batch([(b"k", b"v", ())] * 20, now - 2 * HOUR, timestamp_deltas=deltas)
        err, base, message, log_start, record_errors = self.produce(BOUNDED, batch)
        assert (err, base, log_start) == (INVALID_TIMESTAMP, -1, LOG_START), (err, base, log_start, message)
        assert message == "One or more records have been rejected due to invalid timestamp", message
        assert [i for i, _ in record_errors] == list(range(1, 20, 2)), record_errors
        index, why = record_errors[1]
        assert why.startswith("Timestamp %d of message with offset 3 is out of range. The timestamp should be "
                              "within [" % (now - 2 * HOUR)), why

    def refused_batch_appends_nothing(self):
        res = w.parse_list_offsets_v1(self.c.call(w.list_offsets_v1(4, COMPACTED, [0]), 4))
        assert res == {(COMPACTED, 0): (0, 5)}, res


def main():
    with Runnel() as broker:
        t = RecordErrors(broker)
        rc = run_tests([
            ("10 keyless records of 100 on a compacted topic: 10 record errors", t.keyless_records_on_a_compacted_topic),
            ("records out of the timestamp range: each one named", t.timestamps_out_of_range),
            ("a refused batch appends nothing", t.refused_batch_appends_nothing),
        ], broker)
        t.c.close()
    sys.exit(rc)


if __name__ == "__main__":
    main()
