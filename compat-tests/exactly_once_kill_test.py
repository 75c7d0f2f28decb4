#!/usr/bin/python3
"""Exactly-once read-process-write on one broker, with crashes (issue 16).

An application copies an input topic to an output topic, in one of three
clients (--copier): built the way librdkafka's exactly-once example is
(Debian's confluent-kafka, librdkafka 2.0.2: the default, below); the Java
client's loop as Kafka's EOS examples write it (kafka-clients 4.1.1, speaking
transaction protocol v2: compat-tests/streams/.../EosCopier.java); franz-go's
GroupTransactSession (compat-tests/franz-go-copier). The librdkafka one:
it consumes as a member of a group (read_committed, no auto-commit, a static
group.instance.id so a restarted instance takes its place at once), and for
each batch begins a transaction, produces one output record per input
record, sends the consumer's positions to the transaction
(send_offsets_to_transaction with the consumer's group metadata) and
commits. An abortable error aborts and rewinds the consumer to the group's
committed offsets; a fatal one (fenced) ends the process, as it should.

While it runs the test crashes it: in rounds at random points (seeded, the
seed printed), it SIGKILLs the application, or SIGKILLs the broker and
starts it again on the same log dir, and starts a new application instance
(the same transactional.id: its InitProducerId aborts what the killed one
left open). Once the group's committed offsets reach the end of the input,
a read_committed reader must find every input record's output exactly once,
none missing, none twice; a read_uncommitted one at least as many (aborted
copies included).

usage: exactly_once_kill_test.py <path to runnel> [--copier librdkafka|java|franz-go --cache DIR]
       exactly_once_kill_test.py --app <bootstrap> <input> <output> <group>   (the application)
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runnel_harness import Runnel, run_tests  # noqa: E402
from transactions_test import committed, read_all  # noqa: E402

PARTITIONS = 3
RECORDS = 10000
PER_TRANSACTION = 25  # small: many transactions, so the crashes land mid-stream
ROUNDS = 8
TXN_ID = "eos-copier"
OVERRIDES = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
             "transaction.state.log.num.partitions": "4", "group.initial.rebalance.delay.ms": "0"}


# -- the application ---------------------------------------------------------

def rewind(consumer):
    """After an abort: back to the group's committed offsets (the start of
    a partition that has none)."""
    assigned = consumer.assignment()
    if not assigned:
        return
    for tp in consumer.committed(assigned, timeout=30):
        consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))


def app(bootstrap, source, sink, group):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": "copier-1",
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         "auto.offset.reset": "earliest", "session.timeout.ms": 6000})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": TXN_ID, "linger.ms": 5,
                         "transaction.timeout.ms": 10000})
    producer.init_transactions(60)
    consumer.subscribe([source])
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    while not stop:
        batch = consumer.consume(PER_TRANSACTION, 0.5)
        batch = [m for m in batch if not m.error()]
        if not batch:
            continue
        try:
            producer.begin_transaction()
            for m in batch:
                producer.produce(sink, key=m.value(), value=b"out-" + m.value(), partition=m.partition())
            producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                                 consumer.consumer_group_metadata(), 30)
            while True:
                try:
                    producer.commit_transaction(30)
                    break
                except KafkaException as e:
                    if not e.args[0].retriable():
                        raise
        except KafkaException as e:
            err = e.args[0]
            if err.fatal():
                sys.stderr.write("copier: fatal %s\n" % err)
                sys.exit(3)
            if not err.txn_requires_abort():
                sys.stderr.write("copier: %s\n" % err)
                sys.exit(4)
            sys.stderr.write("copier: aborting after %s\n" % err)
            producer.abort_transaction(60)
            rewind(consumer)
    consumer.close()


# -- the test ----------------------------------------------------------------

def committed_offsets(broker, group, topic):
    return committed(broker, group, topic, PARTITIONS)


def read_values(broker, topic, isolation, expect):
    """Every value of the topic, all partitions together."""
    by_partition = read_all(broker, topic, isolation, PARTITIONS, expect=expect, timeout=60.0)
    return [v for p in range(PARTITIONS) for v in by_partition[p]]


HERE = os.path.dirname(os.path.abspath(__file__))


def copier_command(kind, cache):
    """The copier's command line before its BOOTSTRAP INPUT OUTPUT GROUP; each
    execs its process, so the pid SIGKILLed is the application's."""
    if kind == "java":
        return [os.path.join(HERE, "streams", "run"), "--cache", cache, "--copier"]
    if kind == "franz-go":
        return [os.path.join(HERE, "franz-go-copier", "run"), "--cache", cache]
    return [sys.executable, os.path.abspath(__file__), "--app"]


class Copier:
    command = copier_command("librdkafka", None)

    def __init__(self, broker, source, sink, group, log):
        self.proc = subprocess.Popen(self.command + [broker.bootstrap, source, sink, group],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def kill9(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill9()


def committed_total(broker, group, source):
    try:
        return sum(max(o, 0) for o in committed_offsets(broker, group, source))
    except KafkaException:
        return -1


def wait_progress(broker, group, source, beyond, timeout=60.0):
    """Until the group's committed offsets pass `beyond` (or the end): a
    crash then lands in a copier that is working, not one still starting (a
    JVM takes seconds). Bounded; the committed total."""
    deadline = time.monotonic() + timeout
    done = committed_total(broker, group, source)
    while done <= beyond and done < RECORDS and time.monotonic() < deadline:
        time.sleep(0.1)
        done = committed_total(broker, group, source)
    return done


def exactly_once_through_crashes(broker):
    seed = int(os.environ.get("EOS_SEED", str(int(time.time()))))
    print("seed %d (EOS_SEED=%d reruns this sequence)" % (seed, seed))
    rnd = random.Random(seed)
    source, sink, group = "eos-in", "eos-out", "eos-group"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in (source, sink)]).values():
        f.result(timeout=30)
    p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    for i in range(RECORDS):
        p.produce(source, value=b"in-%05d" % i, partition=i % PARTITIONS)
    assert p.flush(30) == 0
    end = [RECORDS // PARTITIONS + (1 if p_ < RECORDS % PARTITIONS else 0) for p_ in range(PARTITIONS)]

    log = open(os.path.join(broker.tmp, "copier.log"), "ab")
    copier = Copier(broker, source, sink, group, log)
    crashes = []
    try:
        done = 0
        for _ in range(ROUNDS):
            wait_progress(broker, group, source, done)
            time.sleep(rnd.uniform(0.1, 0.8))
            what = rnd.choice(["app", "app", "broker"])
            done = committed_total(broker, group, source)
            crashes.append("%s at %d" % (what, done))
            if what == "app":
                copier.kill9()
            else:
                broker.kill9()
                broker.start()
                if copier.proc.poll() is None and rnd.random() < 0.5:
                    continue  # the application rides the broker's restart
                copier.kill9()
            copier = Copier(broker, source, sink, group, log)
        # Then let it finish: the group's offsets reach the end of the input.
        deadline = time.monotonic() + 120
        while True:
            if copier.proc.poll() is not None:
                # A fenced or failed instance ends; start another, as an operator would.
                crashes.append("exit %d" % copier.proc.returncode)
                copier = Copier(broker, source, sink, group, log)
            try:
                if committed_offsets(broker, group, source) == end:
                    break
            except KafkaException:
                pass
            assert time.monotonic() < deadline, "committed %s, want %s" % (
                committed_offsets(broker, group, source), end)
            time.sleep(0.5)
    finally:
        copier.stop()
        log.close()
    print("crashes (with the input records committed then): %s" % ", ".join(crashes))
    mid_stream = sum(1 for c in crashes if " at " in c and 0 <= int(c.split(" at ")[1]) < RECORDS)
    assert mid_stream >= ROUNDS // 2, "only %d crashes landed before the end of the input: %s" % (
        mid_stream, crashes)

    want = sorted(b"out-in-%05d" % i for i in range(RECORDS))
    got = read_values(broker, sink, "read_committed", RECORDS)
    missing = sorted(set(want) - set(got))
    twice = sorted(v for v in set(got) if got.count(v) > 1)
    assert not missing and not twice and len(got) == RECORDS, (
        "read_committed: %d records, %d missing (%s), %d more than once (%s)" % (
            len(got), len(missing), missing[:5], len(twice), twice[:5]))
    everything = read_values(broker, sink, "read_uncommitted", RECORDS)
    assert len(everything) >= RECORDS, len(everything)
    print("read_committed: each of %d outputs once; read_uncommitted: %d (aborted copies included)"
          % (RECORDS, len(everything)))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--app":
        app(*sys.argv[2:])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("runnel")
    ap.add_argument("--copier", choices=["librdkafka", "java", "franz-go"], default="librdkafka")
    ap.add_argument("--cache", help="where the java and franz-go copiers are built")
    args = ap.parse_args()
    if args.copier != "librdkafka":
        if not args.cache:
            ap.error("--copier %s needs --cache" % args.copier)
        # Built before the broker starts, so no build lands inside a round.
        subprocess.run(copier_command(args.copier, args.cache) + ["--build-only"], check=True)
    Copier.command = copier_command(args.copier, args.cache)
    with Runnel(binary=args.runnel, overrides=OVERRIDES) as broker:
        rc = run_tests([("%s: each input's output exactly once through application and broker SIGKILLs"
                         % args.copier, lambda: exactly_once_through_crashes(broker))], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
