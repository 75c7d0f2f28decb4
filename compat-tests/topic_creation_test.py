"""Topic creation: bounded like Kafka's controller, off the event loop, all
or nothing (issue 12).

- One CreateTopics asking for more than 10,000 partitions is answered
  POLICY_VIOLATION (44) "Excessively large number of partitions per
  request." for every topic (Kafka's ReplicationControlManager
  MAX_PARTITIONS_PER_BATCH); one whose topics would write more than 10,000
  metadata records (a TopicRecord per topic, a PartitionRecord per
  partition) "Unable to perform excessively large batch operation."
  (QuorumController MAX_RECORDS_PER_USER_OP). Nothing is created.
- While one connection creates a 2,000-partition topic, another's
  ApiVersions and Metadata requests keep being answered: counted, not timed.
- Two concurrent creations of one name: one succeeds, the other is
  TOPIC_ALREADY_EXISTS (36).

Failures on disk are topic_creation_faults_test.py.

usage: /usr/bin/python3 topic_creation_test.py <runnel binary>
"""

import select
import sys
import time

import kafka_wire as w
from runnel_harness import Runnel, run_tests
from topic_checks import SLOW, assert_absent, create

NONE = 0
TOPIC_ALREADY_EXISTS = 36
POLICY_VIOLATION = 44
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."
TOO_MANY_RECORDS = "Unable to perform excessively large batch operation."


class Test:
    def __init__(self, broker):
        self.broker = broker

    def too_many_partitions(self):
        for validate_only in (False, True):
            res = create(self.broker, [("big-a", 6000, 1), ("big-b", 4001, 1)], validate_only=validate_only)
            assert res == [("big-a", POLICY_VIOLATION, TOO_MANY_PARTITIONS),
                           ("big-b", POLICY_VIOLATION, TOO_MANY_PARTITIONS)], res
        assert_absent(self.broker, "big-a")
        assert_absent(self.broker, "big-b")

    def too_many_records(self):
        # 10,000 partitions pass the partition count; with the TopicRecord
        # they are 10,001 records.
        res = create(self.broker, [("big-c", 10000, 1)])
        assert res == [("big-c", POLICY_VIOLATION, TOO_MANY_RECORDS)], res
        assert_absent(self.broker, "big-c")
        # Within both bounds: created.
        res = create(self.broker, [("small", 3, 1)])
        assert res == [("small", NONE, None)], res

    def served_while_creating(self):
        creator = w.Connection(self.broker.port, timeout=SLOW)
        other = w.Connection(self.broker.port, timeout=SLOW)
        try:
            creator.send(w.create_topics_v4(1, [("large", 2000, 1)], timeout_ms=600000))
            answered = 0
            corr = 10
            while True:
                corr += 1
                if corr % 2:
                    err, _ = w.parse_api_versions_v0(other.call(w.api_versions_v0(corr), corr))
                    assert err == 0, err
                else:
                    assert "small" in w.parse_metadata_v1_topics(other.call(w.metadata_v1(corr, ["small"]), corr))
                # Answered during the creation only if the creation's
                # answer has not arrived yet.
                ready, _, _ = select.select([creator.sock], [], [], 0)
                if ready:
                    break
                answered += 1
                time.sleep(0.01)  # a client, not a load generator
            res = w.parse_create_topics_v4(creator.response(1))
        finally:
            creator.close()
            other.close()
        assert res == [("large", NONE, None)], res
        print("    %d requests answered on another connection during the creation" % answered)
        assert answered >= 20, "only %d requests answered while the topic was being created" % answered
        with w.Connection(self.broker.port) as c:
            assert len(w.parse_metadata_v1_topics(c.call(w.metadata_v1(2, ["large"]), 2))["large"][1]) == 2000

    def concurrent_same_name(self):
        a = w.Connection(self.broker.port, timeout=SLOW)
        b = w.Connection(self.broker.port, timeout=SLOW)
        try:
            a.send(w.create_topics_v4(1, [("twice", 300, 1)]))
            b.send(w.create_topics_v4(2, [("twice", 300, 1)]))
            codes = sorted([w.parse_create_topics_v4(a.response(1))[0][1],
                            w.parse_create_topics_v4(b.response(2))[0][1]])
        finally:
            a.close()
            b.close()
        assert codes == [NONE, TOPIC_ALREADY_EXISTS], codes
        with w.Connection(self.broker.port) as c:
            assert len(w.parse_metadata_v1_topics(c.call(w.metadata_v1(3, ["twice"]), 3))["twice"][1]) == 300


def main():
    broker = Runnel()
    with broker:
        t = Test(broker)
        rc = run_tests([
            ("over 10,000 partitions: POLICY_VIOLATION for every topic, nothing created", t.too_many_partitions),
            ("over 10,000 metadata records: POLICY_VIOLATION, nothing created", t.too_many_records),
            ("other connections are served while 2,000 partitions are created", t.served_while_creating),
            ("two creations of one name: one TOPIC_ALREADY_EXISTS", t.concurrent_same_name),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
