#!/usr/bin/python3
"""10,000 partitions on one broker (label "scale", issue 18).

Ten topics of 1,000 partitions each are created through CreateTopics; then
Metadata for all of them (every partition led, no error), one record
produced to each of the 10,000 partitions by one confluent-kafka producer
(acks=all) and read back by one consumer assigned all of them; the broker
is restarted (SIGTERM, then the same dir) and everything is read again;
then one topic is deleted (DeleteTopics through confluent-kafka's admin
client) and Metadata no longer lists it while the other 9,000 stay led.
What each step took, the broker's open file descriptors, memory maps and
resident memory are printed; the assertions are on what was read, on
Metadata, and on the descriptors: one per segment (each partition has
one) and a bounded rest, the `ulimit -n` README.md states, and the deleted
topic's closed.

bench/scale_bench.py runs these same steps on Runnel's release build and on
Apache Kafka side by side and writes the figures down.

usage: /usr/bin/python3 partitions_scale_test.py <runnel binary> [--topics 10] [--per-topic 1000]
"""

import argparse
import os
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

import kafka_wire as w
from runnel_harness import Runnel

NOT_PER_PARTITION = 300  # descriptors beyond one per segment: listeners, clients, the process's own


def proc_stats(pid):
    """The process's open descriptors, memory maps and resident MiB."""
    fds = len(os.listdir("/proc/%d/fd" % pid))
    with open("/proc/%d/maps" % pid) as f:
        maps = sum(1 for _ in f)
    rss = 0.0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024.0
    return {"fds": fds, "maps": maps, "rss_mib": round(rss, 1)}


def topic_names(topics):
    return ["scale-%02d" % i for i in range(topics)]


def create_topics(port, names, per_topic, timeout=600.0):
    """One CreateTopics per topic; -> seconds it all took."""
    t0 = time.monotonic()
    with w.Connection(port, timeout=timeout) as c:
        for i, name in enumerate(names):
            body = c.call(w.create_topics_v4(10 + i, [(name, per_topic, 1)], timeout_ms=int(timeout * 1000)), 10 + i)
            (_, err, msg), = w.parse_create_topics_v4(body)
            assert err == 0, "creating %s: error %d %s" % (name, err, msg)
    return time.monotonic() - t0


def metadata_all_led(port, names, per_topic, timeout=300.0):
    """Waits (bounded) until Metadata v7 shows every partition led without an
    error; -> (seconds of the last Metadata, its response bytes)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        with w.Connection(port, timeout=60) as c:
            t0 = time.monotonic()
            body = c.call(w.metadata_v7(99, names), 99)
            took = time.monotonic() - t0
        md = w.parse_metadata_v7(body)
        bad = []
        for name in names:
            t = md["topics"].get(name)
            if t is None or t["error"] != 0 or len(t["partitions"]) != per_topic:
                bad.append((name, None if t is None else (t["error"], len(t["partitions"]))))
                continue
            bad += [(name, p) for p, v in t["partitions"].items() if v["error"] != 0 or v["leader"] < 0]
        if not bad:
            return took, len(body)
        last = bad[:5]
        if time.monotonic() > deadline:
            raise AssertionError("Metadata after %.0f s: %d partitions not led (%s)" % (timeout, len(bad), last))
        time.sleep(1.0)


def value_of(topic, p):
    return b"%s/%d" % (topic.encode(), p)


def produce_one_each(bootstrap, names, per_topic, timeout=300.0):
    """One record to every partition (acks=all); -> seconds until all were acknowledged."""
    acked, failed = {}, []

    def report(err, msg):
        if err is None:
            acked[(msg.topic(), msg.partition())] = msg.offset()
        else:
            failed.append((msg.topic(), msg.partition(), str(err)))

    producer = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "acks": "all",
                         "linger.ms": 50, "queue.buffering.max.messages": 200000,
                         "message.timeout.ms": int(timeout * 1000)})
    t0 = time.monotonic()
    for name in names:
        for p in range(per_topic):
            producer.produce(name, value_of(name, p), partition=p, on_delivery=report)
        producer.poll(0)
    left = producer.flush(timeout)
    took = time.monotonic() - t0
    assert left == 0 and not failed, "%d undelivered, %d failed (%s)" % (left, len(failed), failed[:3])
    wrong = [(k, o) for k, o in acked.items() if o != 0]
    assert len(acked) == len(names) * per_topic and not wrong, "acknowledged %d, at offsets other than 0: %s" % (
        len(acked), wrong[:3])
    return took


def consume_all(bootstrap, names, per_topic, timeout=300.0):
    """One consumer assigned every partition from offset 0 reads one record
    each; -> seconds it took. Asserts each record is its partition's."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "group.id": "scale-reader",
                         "enable.auto.commit": False, "queued.min.messages": 1})
    consumer.assign([TopicPartition(name, p, 0) for name in names for p in range(per_topic)])
    seen = {}
    t0 = time.monotonic()
    deadline = t0 + timeout
    try:
        while len(seen) < len(names) * per_topic and time.monotonic() < deadline:
            for m in consumer.consume(1000, 1.0):
                if m.error():
                    continue
                key = (m.topic(), m.partition())
                assert m.value() == value_of(*key) and m.offset() == 0, "%s-%d offset %d holds %r" % (
                    key[0], key[1], m.offset(), m.value())
                seen[key] = True
        took = time.monotonic() - t0
    finally:
        consumer.close()
    assert len(seen) == len(names) * per_topic, "read %d of %d partitions' records in %.0f s" % (
        len(seen), len(names) * per_topic, timeout)
    return took


def delete_topic(bootstrap, port, name, others, per_topic, timeout=300.0):
    """DeleteTopics for one topic, then Metadata (bounded) until it is gone;
    -> seconds until the deletion was answered. Before deleting them in one
    pass, deleting a 1,000-partition topic beside 9,000 others took longer
    than the admin client's default 30 s and answered REQUEST_TIMED_OUT."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    t0 = time.monotonic()
    admin.delete_topics([name], operation_timeout=timeout, request_timeout=timeout + 10)[name].result(timeout + 20)
    took = time.monotonic() - t0
    deadline = time.monotonic() + timeout
    while True:
        with w.Connection(port, timeout=60) as c:
            md = w.parse_metadata_v7(c.call(w.metadata_v7(98, [name]), 98))
        t = md["topics"].get(name)
        if t is not None and t["error"] == 3:  # UNKNOWN_TOPIC_OR_PARTITION
            break
        assert time.monotonic() < deadline, "%s still in Metadata %.0f s after its deletion: %s" % (name, timeout, t)
        time.sleep(0.5)
    metadata_all_led(port, others, per_topic)
    return took


def run(broker, pid_of, names, per_topic, restart, log=print):
    """The steps on a started broker; `restart()` restarts it and returns
    the seconds until it answered Metadata. -> figures."""
    figures = {"partitions": len(names) * per_topic}
    figures["create_s"] = round(create_topics(broker.port, names, per_topic), 2)
    took, size = metadata_all_led(broker.port, names, per_topic)
    figures.update(metadata_s=round(took, 3), metadata_bytes=size)
    figures["produce_s"] = round(produce_one_each(broker.bootstrap, names, per_topic), 2)
    figures["consume_s"] = round(consume_all(broker.bootstrap, names, per_topic), 2)
    figures["serving"] = proc_stats(pid_of())
    log("  serving: %s" % figures)
    figures["restart_s"] = round(restart(), 2)
    t0 = time.monotonic()
    metadata_all_led(broker.port, names, per_topic)
    figures["restart_led_s"] = round(time.monotonic() - t0 + figures["restart_s"], 2)
    figures["restarted_idle"] = proc_stats(pid_of())
    figures["consume_after_restart_s"] = round(consume_all(broker.bootstrap, names, per_topic), 2)
    figures["restarted_serving"] = proc_stats(pid_of())
    figures["delete_topic_s"] = round(delete_topic(broker.bootstrap, broker.port, names[-1], names[:-1], per_topic), 2)
    figures["deleted_one"] = proc_stats(pid_of())
    log("  after restart and a deletion: %s" % figures)
    return figures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", nargs="?")
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--per-topic", type=int, default=1000)
    args = ap.parse_args()
    names = topic_names(args.topics)
    partitions = args.topics * args.per_topic
    # A descriptor per segment and the rest: what README.md says `ulimit -n` needs.
    limit = partitions + NOT_PER_PARTITION + 700
    with Runnel(args.binary, max_open_files=limit, ready_timeout=120) as b:
        b.stop_timeout = 300.0  # closing 10,000 logs under ASan on a loaded machine

        def restart():
            t0 = time.monotonic()
            b.restart(graceful=True)
            return time.monotonic() - t0
        figures = run(b, lambda: b.proc.pid, names, args.per_topic, restart)
        for when in ("serving", "restarted_serving"):
            fds = figures[when]["fds"]
            assert fds <= partitions + NOT_PER_PARTITION, "%s: %d descriptors for %d partitions" % (
                when, fds, partitions)
        fds = figures["deleted_one"]["fds"]
        assert fds <= partitions - args.per_topic + NOT_PER_PARTITION, (
            "%d descriptors once %d of the %d partitions were deleted: their logs are not all closed" % (
                fds, args.per_topic, partitions))
        assert b.stop() == 0, "graceful stop"
    print("ok   %d partitions: created in %.1f s, Metadata %d bytes, one record each produced and read back, "
          "again after a restart (%.1f s to every partition led), a topic deleted in %.1f s; %d descriptors, "
          "%.0f MiB resident (debug build)" % (
              partitions, figures["create_s"], figures["metadata_bytes"], figures["restart_led_s"],
              figures["delete_topic_s"],
              figures["restarted_serving"]["fds"], figures["restarted_serving"]["rss_mib"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
