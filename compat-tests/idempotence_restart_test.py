"""Runnel restarted in the middle of an idempotent stream, gracefully
(SIGTERM) and by a crash (SIGKILL): one librdkafka producer
(enable.idempotence, acks=all) keeps producing across both restarts, with
batches in flight when the broker goes away. When the broker is back, the
producer's retried batches must be recognised from the producer state the
broker rebuilt (from the log, or a producer-state snapshot): no
OUT_OF_ORDER_SEQUENCE_NUMBER, no other sequence or fatal error, no
duplicate, every acknowledged record at its acknowledged offset, in order
(idempotent_stream.py).

Whether a batch was appended but not acknowledged when the broker went away
is left to timing there, so the last step makes it certain: the stream's
last batch, read raw from the log, is sent again by hand after a SIGKILL
and after a SIGTERM restart, and must be answered as the duplicate it is
(its original base offset, nothing appended), while a gap after it is
OUT_OF_ORDER_SEQUENCE_NUMBER.

usage: /usr/bin/python3 idempotence_restart_test.py <runnel binary>
"""

import sys
import threading
import time

from confluent_kafka.admin import AdminClient, NewTopic

import kafka_wire as w
from idempotent_stream import Stream
from runnel_harness import Runnel, run_tests

TOPIC = "idem-restart"
RECORDS = 12000
# Restart points, as counts of acknowledged records: a graceful stop first,
# then a crash.
RESTARTS = [(3000, True), (7000, False)]
AHEAD = 1500  # records produced but not yet acknowledged, at most


def restarter(broker, stream, done, failures):
    try:
        for threshold, graceful in RESTARTS:
            deadline = time.monotonic() + 60
            while stream.acked_count() < threshold:
                assert time.monotonic() < deadline, "only %d records acknowledged before restart at %d" % (
                    stream.acked_count(), threshold)
                time.sleep(0.005)
            print("restart (%s) at %d acknowledged, %d produced" % (
                "SIGTERM" if graceful else "SIGKILL", stream.acked_count(), stream.produced), flush=True)
            broker.restart(graceful=graceful)
    except Exception as e:  # reported by the main thread
        failures.append(e)
    finally:
        done.set()


def call(broker, build, parse, *args):
    with w.Connection(broker.port) as c:
        return parse(c.call(build(1, *args), 1))


def log_end(broker):
    err, offset = call(broker, w.list_offsets_v1, w.parse_list_offsets_v1, TOPIC, [0])[(TOPIC, 0)]
    assert err == 0, err
    return offset


def last_batch(broker):
    end = log_end(broker)
    err, _, records = call(broker, w.fetch_v4, w.parse_fetch_v4, TOPIC, 0, end - 1)[(TOPIC, 0)]
    assert err == 0, err
    batches = [w.batch_header(b) for b in w.split_batches(records)]
    assert batches and batches[-1]["base_offset"] + batches[-1]["last_offset_delta"] == end - 1, batches[-1:]
    return batches[-1], end


def resend(broker, h, base_sequence):
    records = [(None, b"resent", [])] * h["records_count"]
    batch = w.producer_batch(records, int(time.time() * 1000), h["producer_id"], h["producer_epoch"], base_sequence)
    err, base, _ = call(broker, w.produce_v8, w.parse_produce_v8, -1, {TOPIC: [(0, batch)]})[(TOPIC, 0)]
    return err, base


def last_batch_still_a_duplicate(broker, graceful):
    h, end = last_batch(broker)
    assert h["producer_id"] >= 0 and h["base_sequence"] >= 0, h
    broker.restart(graceful=graceful)
    err, base = resend(broker, h, h["base_sequence"])
    assert (err, base) == (0, h["base_offset"]), "the last batch sent again: error %d, base offset %d; expected 0, %d" % (
        err, base, h["base_offset"])
    assert log_end(broker) == end, "the duplicate was appended: log end %d -> %d" % (end, log_end(broker))
    gap = h["base_sequence"] + h["records_count"] + 1
    err, _ = resend(broker, h, gap)
    assert err == 45, "a gap after the last batch: error %d, expected OUT_OF_ORDER_SEQUENCE_NUMBER" % err
    assert log_end(broker) == end


def main():
    broker = Runnel(overrides={"num.partitions": "1"})
    with broker:
        stream = None

        def create_topic():
            admin = AdminClient({"bootstrap.servers": broker.bootstrap, "broker.address.family": "v4"})
            admin.create_topics([NewTopic(TOPIC, 1, 1)], operation_timeout=10)[TOPIC].result(30)

        def produce_across_restarts():
            nonlocal stream
            # Reconnect quickly once the broker is back (librdkafka backs off
            # up to 10 s by default).
            stream = Stream(broker.bootstrap, TOPIC, config={"reconnect.backoff.ms": 20,
                                                             "reconnect.backoff.max.ms": 250})
            done, failures = threading.Event(), []
            t = threading.Thread(target=restarter, args=(broker, stream, done, failures), daemon=True)
            t.start()
            # Paced a little ahead of the acknowledgements, so that records are
            # still being produced (and batches are in flight) at each restart.
            deadline = time.monotonic() + 70
            while stream.produced < RECORDS or not done.is_set():
                assert time.monotonic() < deadline, "producing did not finish in 70 s"
                if stream.produced < RECORDS and stream.produced - stream.acked_count() < AHEAD:
                    stream.produce(100)
                stream.producer.poll(0.01)
            t.join(5)
            if failures:
                raise failures[0]
            stream.finish(60)
            assert broker.alive(), "the broker is not running after the restarts"

        def every_acked_record_once_in_order():
            n = stream.check(broker.bootstrap)
            assert n == RECORDS, "%d records in the log, %d produced and acknowledged" % (n, RECORDS)

        def duplicate_after_sigkill():
            last_batch_still_a_duplicate(broker, graceful=False)

        def duplicate_after_sigterm():
            last_batch_still_a_duplicate(broker, graceful=True)

        def graceful_stop():
            assert broker.stop() == 0, "exit status after SIGTERM (a sanitizer report makes it non-zero)"

        rc = run_tests([
            ("create the topic", create_topic),
            ("an idempotent producer keeps producing across a SIGTERM and a SIGKILL restart", produce_across_restarts),
            ("the partition holds every record once, in order, at its acked offset", every_acked_record_once_in_order),
            ("after a SIGKILL restart the last batch is still a duplicate", duplicate_after_sigkill),
            ("after a SIGTERM restart too", duplicate_after_sigterm),
            ("graceful stop", graceful_stop),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
