#!/usr/bin/python3
"""Kafka Streams exactly_once_v2 word count on one broker (issue 16).

A Kafka Streams 4.1.1 application (compat-tests/streams: Maven Central,
built into the cache dir) counts the words of an input topic with
processing.guarantee=exactly_once_v2: lines are split into words, re-keyed
through a repartition topic, counted in an in-memory store whose changelog
topic is the only copy of the counts (so a restarted instance restores them
with read_committed fetches), and every new count goes to the output topic.
The record cache is off, so every count update is its own output record.

The input, fixed (seeded) lines, is produced in batches while the test:
starts the application, SIGKILLs it mid-stream and starts another instance
(same state dir, so the same transactional ids: InitProducerId fences and
aborts what the killed one left open), SIGKILLs the broker and starts it
again on the same log dir while that instance runs, closes it with SIGTERM
and starts a third. Then a read_committed reader of the output must see, for
each word, exactly the counts 1, 2, ..., n in order, n being the word's
occurrences in the input: none missing, none twice, none beyond n.

usage: streams_eos_test.py <path to runnel> <cache dir>
       streams_eos_test.py --kafka <kafka jar cache dir> <cache dir>   (the same against Kafka 4.1.1)
"""
import collections
import os
import random
import re
import shutil
import subprocess
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runnel_harness import Runnel, run_tests  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PARTITIONS = 2
BATCHES = 6
LINES_PER_BATCH = 150
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
         "kilo", "lima", "mike", "november", "oscar", "papa"]
INPUT, OUTPUT, APP_ID = "wc-in", "wc-out", "wc-eos"
OVERRIDES = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
             "transaction.state.log.num.partitions": "4", "group.initial.rebalance.delay.ms": "0",
             "offsets.topic.num.partitions": "4"}


def input_batches():
    rnd = random.Random(16)
    return [[" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 8))) for _ in range(LINES_PER_BATCH)]
            for _ in range(BATCHES)]


def expected_counts(batches):
    counts = collections.Counter()
    for batch in batches:
        for line in batch:
            counts.update(w for w in re.split(r"\W+", line.lower()) if w)
    return counts


def produce(broker, lines):
    p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    for line in lines:
        p.produce(INPUT, value=line.encode())
    assert p.flush(30) == 0, "input not delivered in 30 s"


def read_output(broker, timeout=30.0):
    """Every committed output record, (word, count) in each partition's order."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "wc-reader", "enable.auto.commit": False,
                  "isolation.level": "read_committed", "enable.partition.eof": True})
    c.assign([TopicPartition(OUTPUT, p, 0) for p in range(PARTITIONS)])
    records, eof = [], set()
    deadline = time.monotonic() + timeout
    try:
        while len(eof) < PARTITIONS:
            if time.monotonic() > deadline:
                raise AssertionError("output not read to its end in %.0f s" % timeout)
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                    continue
                raise KafkaException(m.error())
            eof.discard(m.partition())
            records.append((m.key().decode(), int(m.value().decode())))
        return records
    finally:
        c.close()


def latest(records):
    out = {}
    for word, count in records:
        out[word] = count
    return out


def wait_for(broker, what, done, timeout):
    """Polls the committed output until done(latest counts) holds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = latest(read_output(broker))
            if done(last):
                return last
        except (KafkaException, AssertionError) as e:
            last = "read failed: %s" % e
        time.sleep(0.5)
    raise AssertionError("%s: not within %.0f s; last output %s" % (what, timeout, last))


class App:
    """One Streams instance: `run` execs the JVM, so its pid is the JVM's."""

    def __init__(self, broker, cache, state_dir, log):
        self.proc = subprocess.Popen([os.path.join(HERE, "streams", "run"), "--cache", cache, broker.bootstrap,
                                      INPUT, OUTPUT, APP_ID, state_dir],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def check_alive(self):
        assert self.proc.poll() is None, "the Streams application exited with %s" % self.proc.returncode

    def kill9(self):
        self.check_alive()
        self.proc.kill()
        self.proc.wait(10)

    def stop(self):
        self.check_alive()
        self.proc.terminate()
        try:
            rc = self.proc.wait(40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError("the Streams application did not close within 40 s of SIGTERM")
        # The JVM exits 143 after its shutdown hook closed Streams.
        assert rc in (0, 143), "the Streams application exited with %s on SIGTERM" % rc


def word_count_through_restarts(broker, cache):
    batches = input_batches()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in (INPUT, OUTPUT)]).values():
        f.result(timeout=30)
    state_dir = os.path.join(broker.tmp, "streams-state")
    log = open(os.path.join(broker.tmp, "streams.log"), "ab")
    app = None
    try:
        def total(counts):
            return sum(counts.values())

        produce(broker, batches[0] + batches[1])
        app = App(broker, cache, state_dir, log)
        # Part of the input counted and committed, then a crash mid-stream.
        wait_for(broker, "first counts", lambda c: total(c) > 0, 90)
        produce(broker, batches[2])
        app.kill9()
        print("application SIGKILLed after first counts")

        app = App(broker, cache, state_dir, log)
        wait_for(broker, "counts of the first three batches",
                 lambda c: c == dict(expected_counts(batches[:3])), 90)
        produce(broker, batches[3])
        time.sleep(1.0)  # let it be mid-transaction when the broker goes
        broker.kill9()
        broker.start()
        print("broker SIGKILLed and restarted under the running application")
        produce(broker, batches[4])
        wait_for(broker, "counts of the first five batches",
                 lambda c: c == dict(expected_counts(batches[:5])), 120)
        app.stop()
        print("application closed with SIGTERM")

        produce(broker, batches[5])
        app = App(broker, cache, state_dir, log)
        want = dict(expected_counts(batches))
        wait_for(broker, "counts of the whole input", lambda c: c == want, 90)
        app.stop()
        app = None

        records = read_output(broker)
        seen = collections.defaultdict(list)
        for word, count in records:
            seen[word].append(count)
        assert set(seen) == set(want), "words %s, expected %s" % (sorted(seen), sorted(want))
        for word, counts in sorted(seen.items()):
            assert counts == list(range(1, want[word] + 1)), \
                "%s: committed counts %s, expected 1..%d once each" % (word, counts, want[word])
        print("%d committed count updates for %d words, each exactly once" % (len(records), len(want)))
    finally:
        if app is not None and app.proc.poll() is None:
            app.proc.kill()
            app.proc.wait(10)
        log.close()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--kafka":
        import kafka_harness
        broker = kafka_harness.Kafka(sys.argv[2], OVERRIDES)
        cache = sys.argv[3]
    elif len(sys.argv) == 3:
        broker = Runnel(binary=sys.argv[1], overrides=OVERRIDES)
        cache = sys.argv[2]
    else:
        sys.exit(__doc__)
    # Built before the broker starts, so Maven's time is not the test's.
    subprocess.run([os.path.join(HERE, "streams", "run"), "--cache", cache, "--build-only"], check=True)
    with broker:
        rc = run_tests([("streams_exactly_once_v2_word_count",
                         lambda: word_count_through_restarts(broker, cache))], broker)
        if rc:
            try:
                with open(os.path.join(broker.tmp, "streams.log"), "rb") as f:
                    sys.stdout.write(f.read()[-20000:].decode(errors="replace"))
            except OSError:
                pass
    sys.exit(rc)


if __name__ == "__main__":
    main()
