"""Fetch's limits and when it answers, from hand-built requests (issue 12,
defects 10 and 11).

- A partition named more than once is answered once, as Kafka's
  FetchRequest.fetchData map collapses it: the last mention's offset counts,
  in the place of the first mention. Thousands of mentions no longer
  multiply the response (it once grew past 2 GiB behind a negative size).
- fetch.max.bytes caps a response's records whatever MaxBytes asks, yet
  the first batch comes back whole.
- A Fetch with a partition in error (out of range, unknown) is answered at
  once, not after MaxWaitMs.
"""

import struct
import sys
import time

import kafka_wire as w
from runnel_harness import Runnel, run_tests

TOPIC = "fetch-limits"
VALUE = 600_000  # one record of this size per batch, under max.message.bytes
BATCHES = 4      # per partition: 2.4 MB each
FETCH_MAX = 1 << 20
INT32_MAX = w.INT32_MAX
NOT_WAITED = 5.0  # seconds: far below the 10 s MaxWaitMs an unfixed broker waits


def response_body(c, correlation_id, bound):
    """The next response, refusing a size prefix outside [0, bound] before
    reading what it claims."""
    (size,) = struct.unpack(">i", c.recv_exact(4))
    assert 0 <= size <= bound, "response size prefix %d outside [0, %d]" % (size, bound)
    frame = c.recv_exact(size)
    (corr,) = struct.unpack(">i", frame[:4])
    assert corr == correlation_id, "correlation id %d, expected %d" % (corr, correlation_id)
    return frame[4:]


class FetchLimits:
    def __init__(self, broker):
        self.broker = broker
        with w.Connection(broker.port) as c:
            (name, err, msg), = w.parse_create_topics_v4(c.call(w.create_topics_v4(1, [(TOPIC, 2, 1)]), 1))
            assert err == 0, (err, msg)
            for p in range(2):
                for n in range(BATCHES):
                    batch = w.record_batch([(b"k%d" % n, bytes([65 + n]) * VALUE, ())], int(time.time() * 1000))
                    res = w.parse_produce_v8(c.call(w.produce_v8(2, -1, {TOPIC: [(p, batch)]}), 2))
                    assert res[(TOPIC, p)][0] == 0, res

    def fetch(self, topics, bound=64 << 20, **kw):
        with w.Connection(self.broker.port) as c:
            c.send(w.fetch_v4_many(9, topics, **kw))
            return w.parse_fetch_v4_in_order(response_body(c, 9, bound))

    def duplicates_collapse(self):
        # Kafka's LinkedHashMap: partition 0 keeps its first place and takes
        # its last mention's offset (3); partition 1 follows in the same
        # topic entry.
        mentions = [(TOPIC, [(0, 0, INT32_MAX)]), (TOPIC, [(1, 0, INT32_MAX)]),
                    (TOPIC, [(0, 1, INT32_MAX)] * 2497), (TOPIC, [(0, 3, 1)])]
        out = self.fetch(mentions, max_bytes=INT32_MAX, max_wait_ms=0)
        assert [(t, p) for t, p, *_ in out] == [(TOPIC, 0), (TOPIC, 1)], [(t, p, e, len(r)) for t, p, e, _, r in out]
        (_, _, err0, hw0, rec0), (_, _, err1, hw1, _) = out
        assert (err0, hw0, err1, hw1) == (0, BATCHES, 0, BATCHES), out
        first = w.split_batches(rec0)
        assert [w.batch_header(b)["base_offset"] for b in first] == [3], "partition 0 not read from offset 3"

    def one_topic_entry_per_run(self):
        # Partitions of one topic share an entry only while consecutive, as
        # Kafka's FetchResponse.toMessage groups them: the request's order
        # is kept.
        out = self.fetch([(TOPIC, [(1, 0, 1)]), ("no-such-topic", [(0, 0, 1)]), (TOPIC, [(0, 0, 1), (1, 2, 1)])],
                         max_wait_ms=0)
        assert [(t, p, e) for t, p, e, *_ in out] == [(TOPIC, 1, 0), ("no-such-topic", 0, 3), (TOPIC, 0, 0)], \
            [(t, p, e) for t, p, e, *_ in out]

    def fetch_max_bytes_caps_the_response(self):
        # MaxBytes and PartitionMaxBytes at INT32_MAX: fetch.max.bytes
        # (1 MiB here) bounds the records of both partitions together.
        out = self.fetch([(TOPIC, [(0, 0, INT32_MAX), (1, 0, INT32_MAX)])], max_bytes=INT32_MAX, max_wait_ms=0)
        total = sum(len(r) for *_, r in out)
        assert 0 < total <= FETCH_MAX, "records of %d bytes against fetch.max.bytes %d" % (total, FETCH_MAX)
        # MaxBytes below fetch.max.bytes is the tighter limit.
        out = self.fetch([(TOPIC, [(0, 0, INT32_MAX), (1, 0, INT32_MAX)])], max_bytes=VALUE + 1000, max_wait_ms=0)
        assert [len(w.split_batches(r)) for *_, r in out] == [1, 0], [len(r) for *_, r in out]

    def first_batch_comes_whole(self):
        # KIP-74: a batch larger than every limit is still returned whole.
        out = self.fetch([(TOPIC, [(0, 0, 1)])], max_bytes=1, max_wait_ms=0)
        batches = w.split_batches(out[0][4])
        assert len(batches) == 1 and len(batches[0]) > VALUE, [len(b) for b in batches]

    def answered_at_once(self, what, topics):
        start = time.monotonic()
        out = self.fetch(topics, max_wait_ms=10_000, min_bytes=100 << 20)
        took = time.monotonic() - start
        assert took < NOT_WAITED, "%s answered after %.1f s: waited out MaxWaitMs" % (what, took)
        return {(t, p): e for t, p, e, *_ in out}

    def out_of_range_answers_at_once(self):
        errors = self.answered_at_once("out of range", [(TOPIC, [(0, 1000, 1 << 20)])])
        assert errors == {(TOPIC, 0): 1}, errors  # OFFSET_OUT_OF_RANGE

    def unknown_partition_answers_at_once(self):
        # An idle partition that would wait, next to one that does not exist.
        errors = self.answered_at_once("unknown partition", [(TOPIC, [(0, BATCHES, 1 << 20), (7, 0, 1 << 20)])])
        assert errors == {(TOPIC, 0): 0, (TOPIC, 7): 3}, errors  # UNKNOWN_TOPIC_OR_PARTITION

    def unknown_topic_answers_at_once(self):
        errors = self.answered_at_once("unknown topic", [(TOPIC, [(1, BATCHES, 1 << 20)]), ("nope", [(0, 0, 1)])])
        assert errors == {(TOPIC, 1): 0, ("nope", 0): 3}, errors

    def idle_fetch_still_waits(self):
        # The other side of the rule: without an error, too few bytes wait
        # (at least part of MaxWaitMs; no upper bound is asserted).
        start = time.monotonic()
        out = self.fetch([(TOPIC, [(0, BATCHES, 1 << 20)])], max_wait_ms=1500, min_bytes=1)
        assert [(e, len(r)) for _, _, e, _, r in out] == [(0, 0)], out
        assert time.monotonic() - start >= 1.0, "an idle Fetch did not wait"


def main():
    with Runnel(overrides={"fetch.max.bytes": str(FETCH_MAX)}) as broker:
        t = FetchLimits(broker)
        rc = run_tests([
            ("a partition named 2,500 times is answered once, at its last offset", t.duplicates_collapse),
            ("consecutive partitions of a topic share one topic entry", t.one_topic_entry_per_run),
            ("fetch.max.bytes caps the response, MaxBytes when tighter", t.fetch_max_bytes_caps_the_response),
            ("the first batch comes whole past every limit", t.first_batch_comes_whole),
            ("an out-of-range Fetch is answered at once", t.out_of_range_answers_at_once),
            ("an unknown partition beside an idle one is answered at once", t.unknown_partition_answers_at_once),
            ("an unknown topic beside an idle partition is answered at once", t.unknown_topic_answers_at_once),
            ("an idle Fetch without errors still waits", t.idle_fetch_still_waits),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
