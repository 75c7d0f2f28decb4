"""Operating a three-broker Runnel cluster (label "cluster"), each scenario
on a fresh cluster (3000 ms sessions, 1000 ms heartbeats):

  - SIGTERM a leader with controlled shutdown while an idempotent acks=all
    producer writes: its leaderships move to other ISR members before it
    closes; the producer sees no error and every acknowledged record is
    there exactly once, in order;
  - ElectLeaders PREFERRED (raw, v1): after a leader was killed and came
    back in sync, its partition is given back to it (epoch bumped), and a
    partition already led by its preferred replica is ELECTION_NOT_NEEDED;
  - DeleteTopics while a replica's broker is down: once it returns, its
    copy of the partition is gone from its log dir;
  - DeleteRecords on the leader answers once the followers have adopted
    the new log start offset from their fetches (Kafka's low watermark):
    right after the answer every broker's earliest offset is there, and
    later their log-start-offset-checkpoint (written every 500 ms here);
    after the leader is SIGKILLed the new leader's earliest offset is still
    the deleted-before offset and a consumer from the beginning starts there;
  - DeleteRecords with a follower SIGSTOPped (20 s sessions: still
    registered, so still live) answers REQUEST_TIMED_OUT at its TimeoutMs
    (at once with 0), the leader's own log start moved; after SIGCONT the
    same request succeeds and every broker starts there.

  /usr/bin/python3 compat-tests/cluster_admin_test.py build/debug/runnel
"""

import os
import sys
import threading
import time

import kafka_wire as kw
from cluster_harness import (Cluster, admin, consume, create_topic, list_offset, produce, records_for, run_tests,
                             runnel_binary, wait_until)

BOUND = 30.0  # seconds: CI machines are loaded
REQUEST_TIMED_OUT = 7
DEBUGGING_REPLICA = -2  # ListOffsets from any replica, not only the leader
ELECTION_NOT_NEEDED = 84
PREFERRED_LEADER_NOT_AVAILABLE = 80


def new_cluster(binary, overrides=None):
    return Cluster(3, binary, overrides=overrides, session_timeout_ms=3000, heartbeat_interval_ms=1000)


def elect_leaders_v1(correlation_id, election_type, topic_partitions):
    body = kw.i8(election_type)
    body += kw.array([kw.string(t) + kw.array([kw.i32(p) for p in ps]) for t, ps in topic_partitions])
    body += kw.i32(10000)
    return kw.request(43, 1, correlation_id, body)


def parse_elect_leaders_v1(body):
    """-> (top-level error, {(topic, partition): error})"""
    r = kw.Reader(body)
    r.i32()  # throttle
    top = r.i16()
    out = {}
    for _ in range(r.i32()):
        topic = r.string()
        for _ in range(r.i32()):
            p = r.i32()
            err = r.i16()
            r.string()
            out[(topic, p)] = err
    return top, out


def controlled_shutdown_under_load(binary):
    with new_cluster(binary, {"min.insync.replicas": "2"}) as c:
        topic = "cs"
        create_topic(c.bootstrap(), topic, 3, 3)
        c.wait_in_sync(topic, BOUND)
        from confluent_kafka import Producer
        # Bootstrapped from the brokers that stay: the stopping one closes its listener first.
        p = Producer({"bootstrap.servers": c.bootstrap([2, 3]), "acks": "all", "enable.idempotence": True,
                      "linger.ms": 2, "message.timeout.ms": 60000})
        acked, errors = [], []

        def delivered(err, msg):
            (errors if err else acked).append(err if err else (msg.partition(), msg.offset(), msg.value()))

        stopped = threading.Event()

        def stop_node_1():
            time.sleep(1.5)
            c.stop(1, timeout=60)  # SIGTERM; waits for a clean exit
            stopped.set()

        t = threading.Thread(target=stop_node_1)
        t.start()
        sent = 0
        deadline = time.monotonic() + 60
        while (not stopped.is_set() or sent < 2000) and time.monotonic() < deadline:
            try:
                p.produce(topic, value=b"v%d" % sent, partition=sent % 3, on_delivery=delivered)
                sent += 1
            except BufferError:
                pass
            p.poll(0.001)
        t.join(60)
        assert p.flush(60) == 0, "records left undelivered"
        assert not errors, "the producer saw errors: %s" % errors[:5]
        assert len(acked) == sent, "acked %d of %d" % (len(acked), sent)
        log = c.brokers[1].log_text()
        assert "controlled shutdown: handing over" in log, "node 1 did not hand its leaderships over"
        assert "runnel stopped cleanly" in log, "node 1 did not stop cleanly"
        for part in range(3):
            mine = [v for q, _, v in acked if q == part]
            got = [v for _, _, v in consume(c.bootstrap([2, 3]), topic, part, len(mine))]
            assert got == mine, "%s-%d: read back differs from what was acknowledged" % (topic, part)
        print("     %d records acknowledged across the controlled shutdown, none lost or doubled" % sent, flush=True)


def preferred_election(binary):
    with new_cluster(binary) as c:
        topic = "pe"
        create_topic(c.bootstrap(), topic, 3, 3)
        c.wait_in_sync(topic, BOUND)
        c.kill9(1)
        wait_until(lambda: c.partitions(2, topic)[0]["leader"] in (2, 3), BOUND, "pe-0 led by a survivor")
        top, res = parse_elect_leaders_v1(c.call(2, lambda corr: elect_leaders_v1(corr, 0, [(topic, [0])])))
        assert res[(topic, 0)] == PREFERRED_LEADER_NOT_AVAILABLE, "with node 1 down: %s" % res
        c.start_broker(1)
        before = c.wait_in_sync(topic, BOUND)
        assert before[0]["leader"] != 1, "node 1 took pe-0 back by itself: %s" % before[0]
        top, res = parse_elect_leaders_v1(c.call(3, lambda corr: elect_leaders_v1(corr, 0, [(topic, [0, 1])])))
        assert top == 0, "top-level error %d" % top
        assert res[(topic, 0)] == 0, "pe-0: %s" % res
        assert res[(topic, 1)] == ELECTION_NOT_NEEDED, "pe-1: %s" % res

        def back():
            for i in c.live_ids():
                now = c.partitions(i, topic)[0]
                assert now["leader"] == 1 and now["leader_epoch"] > before[0]["leader_epoch"], "node %d: %s" % (i, now)
            return True
        wait_until(back, BOUND, "pe-0 led by node 1 again on every broker")


def delete_while_down(binary):
    with new_cluster(binary) as c:
        topic = "gone"
        create_topic(c.bootstrap(), topic, 1, 3)
        c.wait_in_sync(topic, BOUND)
        replica_dir = os.path.join(c.brokers[3].log_dir, topic + "-0")
        assert os.path.isdir(replica_dir), "node 3 has no replica dir"
        c.stop(3)
        # Admin clients send DeleteTopics to the controller: once the
        # survivors name one of themselves, it is reachable.
        wait_until(lambda: c.controller(1) in (1, 2) and c.controller(2) in (1, 2), BOUND, "a live controller")
        client = admin(c.bootstrap([1, 2]))
        client.delete_topics([topic], operation_timeout=20)[topic].result(30)
        wait_until(lambda: topic not in c.metadata(1)["topics"], BOUND, "the topic gone from node 1's metadata")
        c.start_broker(3)
        wait_until(lambda: not os.path.isdir(replica_dir), BOUND, "node 3's replica of the deleted topic removed")
        assert topic not in c.metadata(3)["topics"], "node 3 still lists the deleted topic"


def delete_records_followed(binary):
    with new_cluster(binary, {"log.flush.offset.checkpoint.interval.ms": "500"}) as c:
        topic = "trimmed"
        create_topic(c.bootstrap(), topic, 1, 3)
        c.wait_in_sync(topic, BOUND)
        produce(c.bootstrap(), topic, records_for(0, 100, b"dr"))
        leader = c.partitions(1, topic)[0]["leader"]
        answer = delete_records(c, leader, topic, 40, timeout_ms=20000)
        assert answer == (0, 40), "DeleteRecords on leader %d: %s" % (leader, answer)
        # The answer came once the low watermark reached 40: no waiting here.
        assert earliest_offsets(c, topic) == {i: 40 for i in c.live_ids()}, "log starts right after DeleteRecords"
        followers = [i for i in c.live_ids() if i != leader]

        def checkpointed(i):
            path = os.path.join(c.brokers[i].log_dir, "log-start-offset-checkpoint")
            try:
                return ("%s 0 40" % topic) in open(path).read().splitlines()
            except OSError:
                return False
        for i in followers:
            wait_until(lambda: checkpointed(i), BOUND, "node %d's log start of %s-0 at 40" % (i, topic))
        c.kill9(leader)

        def new_leader():
            now = {i: c.partitions(i, topic)[0]["leader"] for i in followers}
            led = set(now.values())
            return led.pop() if len(led) == 1 and led <= set(followers) else None
        successor = wait_until(new_leader, BOUND, "a follower leading %s-0" % topic)
        earliest, = wait_until(lambda: (list_offset(c, successor, topic, 0, -2),), BOUND,
                               "the new leader's earliest offset")
        assert earliest == 40, "new leader %d: earliest offset %d, records before 40 were deleted" % (successor, earliest)
        got = consume(c.bootstrap(followers), topic, 0, 60, timeout=BOUND)
        assert got[0][0] == 40 and len(got) == 60, "read from the beginning after failover: first %s, %d records" % (
            got[0][:1], len(got))


def delete_records(c, node_id, topic, offset, timeout_ms):
    """DeleteRecords v1 of topic-0 before `offset` on node_id: -> (error, low watermark)."""
    body = c.call(node_id, lambda corr: kw.delete_records_v1(corr, topic, [(0, offset)], timeout_ms),
                  timeout=timeout_ms / 1000 + BOUND)
    return kw.parse_delete_records_v1(body)[(topic, 0)]


def earliest_offsets(c, topic, node_ids=None):
    """{node: log start offset of topic-0 in its own log}"""
    return {i: list_offset(c, i, topic, 0, -2, DEBUGGING_REPLICA) for i in node_ids or c.live_ids()}


def delete_records_held_by_paused_follower(binary):
    session_ms = 20000
    with Cluster(3, binary, session_timeout_ms=session_ms, heartbeat_interval_ms=1000) as c:
        topic = "held"
        create_topic(c.bootstrap(), topic, 1, 3)
        c.wait_in_sync(topic, BOUND)
        produce(c.bootstrap(), topic, records_for(0, 100, b"dr"))  # acks=all: every replica has them
        leader = c.partitions(1, topic)[0]["leader"]
        everyone = c.live_ids()
        paused = [i for i in everyone if i != leader][0]
        c.sigstop(paused)
        started = time.monotonic()
        err, low = delete_records(c, leader, topic, 30, timeout_ms=1500)
        took = time.monotonic() - started
        assert err == REQUEST_TIMED_OUT, "DeleteRecords with node %d paused: error %d, low watermark %d" % (
            paused, err, low)
        assert low < 30, "timed out, yet low watermark %d" % low
        assert took >= 1.4, "REQUEST_TIMED_OUT after %.2f s, before the 1500 ms timeout" % took
        err, _ = delete_records(c, leader, topic, 30, timeout_ms=0)
        assert err == REQUEST_TIMED_OUT, "timeout 0 with node %d paused: error %d" % (paused, err)
        # The leader's deletion stands; only the replicas' answer is missing.
        assert earliest_offsets(c, topic, [leader]) == {leader: 30}
        # The follower stayed registered through all this: its session is far from over.
        assert time.monotonic() - started < session_ms / 1000 / 2, "too slow to be sure node %d was live" % paused
        c.sigcont(paused)
        answer = delete_records(c, leader, topic, 30, timeout_ms=20000)
        assert answer == (0, 30), "DeleteRecords after SIGCONT: %s" % (answer,)
        assert earliest_offsets(c, topic, everyone) == {i: 30 for i in everyone}, "log starts after the retry"


def main():
    binary = runnel_binary()
    return run_tests([
        ("SIGTERM with controlled shutdown under acks=all load: no error, nothing lost",
         lambda: controlled_shutdown_under_load(binary)),
        ("ElectLeaders PREFERRED gives a partition back to its first replica", lambda: preferred_election(binary)),
        ("a topic deleted while a replica's broker is down is removed there when it returns",
         lambda: delete_while_down(binary)),
        ("DeleteRecords on the leader: followers follow, and a new leader keeps the log start",
         lambda: delete_records_followed(binary)),
        ("DeleteRecords with a paused follower: REQUEST_TIMED_OUT, then done after SIGCONT",
         lambda: delete_records_held_by_paused_follower(binary)),
    ])


if __name__ == "__main__":
    sys.exit(main())
