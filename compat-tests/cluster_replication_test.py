"""Replication in a three-broker Runnel cluster (label "cluster"), each
scenario on a fresh cluster (its own etcd, ports and dirs) with short
timeouts:

  1. byte-identical replicas: an rf 3 topic with small segments under a
     steady acks=all produce ends with the same .log/.index/.timeindex
     files, byte for byte, in the three brokers' partition directories;
  2. a SIGSTOPped follower leaves the ISR by the lag rule (sessions of
     20000 ms, replica.lag.time.max.ms 3000: it stays registered), acks=all
     with min.insync.replicas=2 goes on, and after SIGCONT it catches up
     and rejoins the ISR;
  3. two of three replicas down with min.insync.replicas=2: acks=all gets
     NOT_ENOUGH_REPLICAS and appends nothing (ListOffsets latest does not
     move); acks=1 goes on;
  4. divergence: records written with acks=1 to a leader whose followers
     are paused are lost when the leader is paused past its session and
     the ISR elects a new one; resumed, the old leader truncates to the new
     leader's epoch boundary and ends byte-identical; every acks=all record
     is present exactly once;
  5. unclean election: the only ISR member killed while an out-of-sync
     replica is paused; resumed, that replica stays out (leader -1) with
     unclean.leader.election.enable=false and leads with it true.

  /usr/bin/python3 compat-tests/cluster_replication_test.py build/debug/runnel [scenario numbers, e.g. 1 4]
"""

import sys
import time

import kafka_wire as kw
from cluster_harness import (NONE, Cluster, consume, create_topic, list_offset, produce, records_for, run_tests,
                             runnel_binary, seed_assignment, wait_identical, wait_until)

NOT_ENOUGH_REPLICAS = 19
BOUND = 30.0  # seconds on top of any timeout the broker is configured with: CI machines are loaded
IDS = [1, 2, 3]


def new_cluster(binary, session_ms=3000, lag_ms=3000, extra=None):
    overrides = {"replica.lag.time.max.ms": str(lag_ms)}
    overrides.update(extra or {})
    return Cluster(3, binary, overrides=overrides, session_timeout_ms=session_ms, heartbeat_interval_ms=1000)


# -- helpers ----------------------------------------------------------------------

def raw_produce(c, node_id, topic, p, records, acks, timeout_ms=5000):
    """One batch of [(key, value)] as Produce v8 to node_id: -> (error_code, base_offset)."""
    batch = kw.record_batch([(k, v, ()) for k, v in records], int(time.time() * 1000))
    body = c.call(node_id, lambda corr: kw.produce_v8(corr, acks, {topic: [(p, batch)]}, timeout_ms=timeout_ms),
                  timeout=timeout_ms / 1000 + 10)
    err, base, _ = kw.parse_produce_v8(body)[(topic, p)]
    return err, base


def part(c, node_id, topic, p):
    return c.partitions(node_id, topic)[p]


def leader_and_controller(c, topic):
    parts = c.partitions(c.live_ids()[0], topic)
    return parts, c.etcd_controller()


# -- 1 ----------------------------------------------------------------------------

def byte_identical_replicas(binary):
    with new_cluster(binary) as c:
        topic = "ident"
        create_topic(c.bootstrap(), topic, 1, 3, {"segment.bytes": "16384", "min.insync.replicas": "2"})
        c.wait_assignment(topic, seed_assignment(IDS, 1, 3), 30.0)
        total = 0
        for round_ in range(6):  # several producer sessions: batches of many sizes
            recs = records_for(0, 500, b"r%d" % round_)
            offsets = produce(c.bootstrap(), topic, recs, acks="all")
            assert offsets[0] == list(range(total, total + 500)), "offsets of round %d: %s..." % (
                round_, offsets[0][:3])
            total += 500
        leader = part(c, 1, topic, 0)["leader"]
        assert list_offset(c, leader, topic, 0) == total, "leader's log end"
        sizes = wait_identical(c, topic, 0, BOUND)
        logs = sorted(n for n in sizes if n.endswith(".log"))
        assert len(logs) >= 5, "segments did not roll (segment.bytes 16384): %s" % sizes
        print("     %d records, %d segments identical on the 3 brokers (%d files, %d bytes)" % (
            total, len(logs), len(sizes), sum(sizes.values())), flush=True)
        got = consume(c.bootstrap(), topic, 0, total)
        assert [o for o, _, _ in got] == list(range(total)), "offsets read back"


# -- 2 ----------------------------------------------------------------------------

def paused_follower_lag_rule(binary):
    lag_ms, session_ms = 3000, 20000
    with new_cluster(binary, session_ms=session_ms, lag_ms=lag_ms) as c:
        topic = "lag"
        create_topic(c.bootstrap(), topic, 1, 3, {"min.insync.replicas": "2"})
        c.wait_assignment(topic, seed_assignment(IDS, 1, 3), 30.0)
        produce(c.bootstrap(), topic, records_for(0, 200, b"before"), acks="all")
        parts, controller = leader_and_controller(c, topic)
        leader = parts[0]["leader"]
        follower = next(r for r in parts[0]["replicas"] if r not in (leader, controller))
        started = time.monotonic()
        c.sigstop(follower)
        # a record it cannot have: it is behind the leader's log end
        assert raw_produce(c, leader, topic, 0, [(b"k", b"behind")], acks=1)[0] == NONE

        bound = lag_ms / 1000 * 1.5 + BOUND

        def shrunk():
            md = c.metadata(leader, [topic])
            v = md["topics"][topic]["partitions"][0]
            assert follower not in v["isr"], "isr %s" % v["isr"]
            return md
        md = wait_until(shrunk, bound, "node %d to leave the ISR of %s-0" % (follower, topic))
        elapsed = time.monotonic() - started
        # The lag rule, not the session: the paused broker is still registered.
        assert follower in md["brokers"], "node %d was fenced (session %d ms) within %.1f s: not the lag rule" % (
            follower, session_ms, elapsed)
        print("     node %d out of the ISR %.1f s after SIGSTOP by the lag rule (lag %d ms, session %d ms, "
              "still registered)" % (follower, elapsed, lag_ms, session_ms), flush=True)
        isr = md["topics"][topic]["partitions"][0]["isr"]
        assert sorted(isr) == sorted(r for r in IDS if r != follower), "isr %s" % isr

        offsets = produce(c.bootstrap([i for i in IDS if i != follower]), topic, records_for(0, 200, b"during"),
                          acks="all")
        assert offsets[0] == list(range(201, 401)), "offsets while node %d is out: %s..." % (follower, offsets[0][:3])

        c.sigcont(follower)
        started = time.monotonic()

        def rejoined():
            for i in IDS:
                v = part(c, i, topic, 0)
                assert sorted(v["isr"]) == IDS, "node %d: isr %s" % (i, v["isr"])
            return True
        wait_until(rejoined, BOUND, "node %d back in the ISR of %s-0" % (follower, topic))
        print("     node %d back in the ISR %.1f s after SIGCONT" % (follower, time.monotonic() - started),
              flush=True)
        wait_identical(c, topic, 0, BOUND)
        produce(c.bootstrap(), topic, records_for(0, 50, b"after"), acks="all")
        wait_identical(c, topic, 0, BOUND)


# -- 3 ----------------------------------------------------------------------------

def two_of_three_down(binary):
    with new_cluster(binary) as c:
        topic = "minisr"
        create_topic(c.bootstrap(), topic, 1, 3, {"min.insync.replicas": "2"})
        c.wait_assignment(topic, seed_assignment(IDS, 1, 3), 30.0)
        produce(c.bootstrap(), topic, records_for(0, 100, b"before"), acks="all")
        leader = part(c, 1, topic, 0)["leader"]
        others = [i for i in IDS if i != leader]
        for i in others:
            c.kill9(i)

        def alone():
            v = part(c, leader, topic, 0)
            assert v["leader"] == leader, "leader %d" % v["leader"]
            assert v["isr"] == [leader], "isr %s" % v["isr"]
            return True
        wait_until(alone, c.session_timeout_ms / 1000 + BOUND, "the ISR of %s-0 to shrink to node %d" % (
            topic, leader))

        end = list_offset(c, leader, topic, 0)
        assert end == 100, "log end %d before the refused produce" % end
        for attempt in range(3):
            err, _ = raw_produce(c, leader, topic, 0, [(b"k", b"refused-%d" % attempt)], acks=-1)
            assert err == NOT_ENOUGH_REPLICAS, "acks=all with isr [%d], min.insync.replicas 2: error %d" % (
                leader, err)
        assert list_offset(c, leader, topic, 0) == end, "acks=all refused with NOT_ENOUGH_REPLICAS appended: " \
            "log end %d, was %d" % (list_offset(c, leader, topic, 0), end)
        assert list_offset(c, leader, topic, 0, -2) == 0, "log start moved"

        err, base = raw_produce(c, leader, topic, 0, [(b"k", b"acks1-a"), (b"k", b"acks1-b")], acks=1)
        assert (err, base) == (NONE, end), "acks=1 with isr [%d]: error %d, base %d (want %d)" % (
            leader, err, base, end)
        assert list_offset(c, leader, topic, 0) == end + 2, "log end after acks=1"
        got = [v for _, _, v in consume(c.bootstrap([leader]), topic, 0, end + 2)]
        assert got[-2:] == [b"acks1-a", b"acks1-b"] and not any(v.startswith(b"refused") for v in got), got[-3:]


# -- 4 ----------------------------------------------------------------------------

def divergence(binary):
    # Sessions of 6000 ms fence the paused leader; a lag of 20000 ms keeps
    # the followers in the ISR while they are paused for a moment.
    session_ms = 6000
    with new_cluster(binary, session_ms=session_ms, lag_ms=20000) as c:
        topic = "diverge"
        create_topic(c.bootstrap(), topic, 3, 3, {"min.insync.replicas": "2"})
        c.wait_assignment(topic, seed_assignment(IDS, 3, 3), 30.0)
        parts, controller = leader_and_controller(c, topic)
        p, old = next((q, v["leader"]) for q, v in sorted(parts.items()) if v["leader"] != controller)
        epoch = parts[p]["leader_epoch"]
        followers = [r for r in parts[p]["replicas"] if r != old]

        first = records_for(p, 300, b"first")
        offsets = produce(c.bootstrap(), topic, first, acks="all")
        assert offsets[p] == list(range(300)), offsets[p][:3]
        wait_identical(c, topic, p, BOUND)

        # Unreplicated: written with acks=1 while both followers are paused
        # (a moment: far below the session and the lag).
        for f in followers:
            c.sigstop(f)
        try:
            zombies = [(b"z", b"zombie-%d" % i) for i in range(5)]
            for i, z in enumerate(zombies):
                err, base = raw_produce(c, old, topic, p, [z], acks=1)
                assert (err, base) == (NONE, 300 + i), "acks=1 to node %d: error %d base %d" % (old, err, base)
            c.sigstop(old)
        finally:
            for f in followers:
                c.sigcont(f)
        started = time.monotonic()

        def elected():
            views = {}
            for i in followers:
                v = part(c, i, topic, p)
                assert v["leader"] in followers, "node %d: leader %d" % (i, v["leader"])
                assert v["leader_epoch"] > epoch, "node %d: epoch %d" % (i, v["leader_epoch"])
                views[i] = (v["leader"], v["leader_epoch"])
            assert len(set(views.values())) == 1, views
            return views[followers[0]]
        new, new_epoch = wait_until(elected, session_ms / 1000 + BOUND, "a new leader of %s-%d from the ISR %s" % (
            topic, p, followers))
        print("     node %d leads %s-%d (epoch %d) %.1f s after node %d was paused" % (
            new, topic, p, new_epoch, time.monotonic() - started, old), flush=True)
        # A follower's fetch already answered when it was paused may still
        # carry the first acks=1 record(s) (Kafka's too): the new leader
        # keeps what it has, the old leader must drop the rest.
        second = records_for(p, 200, b"second")
        offsets = produce(c.bootstrap(followers), topic, second, acks="all")
        kept = offsets[p][0] - 300
        assert 0 <= kept < len(zombies) and offsets[p] == list(range(300 + kept, 500 + kept)), (
            "offsets of the acks=all records via the new leader: %s..." % offsets[p][:3])
        print("     the new leader kept %d of the %d acks=1 records; the old leader must truncate the other %d" % (
            kept, len(zombies), len(zombies) - kept), flush=True)

        c.sigcont(old)
        started = time.monotonic()

        def caught_up():
            for i in IDS:
                v = part(c, i, topic, p)
                assert v["leader"] == new, "node %d: leader %d" % (i, v["leader"])
                assert sorted(v["isr"]) == IDS, "node %d: isr %s" % (i, v["isr"])
            return True
        wait_until(caught_up, session_ms / 1000 + BOUND, "node %d back in the ISR of %s-%d under node %d" % (
            old, topic, p, new))
        print("     node %d back in the ISR %.1f s after SIGCONT" % (old, time.monotonic() - started), flush=True)
        # The .log files byte for byte; the indexes only valid for them. A
        # truncation restarts the count of bytes since the last index entry
        # (Kafka's LogSegment.truncateTo too), so when the old leader had an
        # entry at a zombie record the others never got, its next entry
        # comes later than theirs.
        wait_identical(c, topic, p, BOUND, indexes="valid")
        said = [line for line in c.brokers[old].log_text().splitlines()
                if "%s-%d" % (topic, p) in line and "truncating to" in line]
        print("     node %d: %s" % (old, said[-1].strip() if said else "(logged no truncation)"), flush=True)

        total = 500 + kept
        got = consume(c.bootstrap(), topic, p, total)
        want = [(k, v) for _, k, v in first] + zombies[:kept] + [(k, v) for _, k, v in second]
        assert [(k, v) for _, k, v in got] == want, \
            "records after the truncation: zombies %s" % [v for _, _, v in got if b"zombie" in v]
        assert list_offset(c, new, topic, p) == total, "log end after the rejoin"


# -- 5 ----------------------------------------------------------------------------

def unclean_election(binary, enabled):
    extra = {"unclean.leader.election.enable": "true" if enabled else "false"}
    with new_cluster(binary, extra=extra) as c:
        topic = "unclean"
        # rf 2 over 3 brokers: one partition's replicas leave the controller out
        create_topic(c.bootstrap(), topic, 3, 2)
        c.wait_assignment(topic, seed_assignment(IDS, 3, 2), 30.0)
        parts, controller = leader_and_controller(c, topic)
        p = next(q for q, v in sorted(parts.items()) if controller not in v["replicas"])
        leader, follower = parts[p]["replicas"]
        epoch = parts[p]["leader_epoch"]
        produce(c.bootstrap(), topic, records_for(p, 100, b"synced"), acks="all")
        wait_identical(c, topic, p, BOUND, node_ids=[leader, follower])

        c.sigstop(follower)

        def shrunk():
            v = part(c, leader, topic, p)
            assert v["isr"] == [leader], "isr %s" % v["isr"]
            return True
        wait_until(shrunk, 3.0 * 1.5 + BOUND, "the ISR of %s-%d to shrink to node %d" % (topic, p, leader))
        # out of sync for sure: records it does not have
        err, base = raw_produce(c, leader, topic, p, [(b"k", b"unsynced")], acks=-1)
        assert (err, base) == (NONE, 100), "acks=all with isr [%d], min.insync.replicas 1: %d %d" % (
            leader, err, base)

        c.kill9(leader)

        def offline():
            v = part(c, controller, topic, p)
            assert v["leader"] == -1, "leader %d" % v["leader"]
            return v
        v = wait_until(offline, c.session_timeout_ms / 1000 + BOUND, "%s-%d to go offline" % (topic, p))
        assert v["isr"] == [leader], "isr of the offline partition: %s (Kafka keeps the last member)" % v["isr"]

        c.sigcont(follower)
        c.wait_formed(c.session_timeout_ms / 1000 + BOUND, "node %d listed again after SIGCONT" % follower)
        if not enabled:
            # A window to see no election in: three sessions once it is back.
            deadline = time.monotonic() + 3 * c.session_timeout_ms / 1000
            while time.monotonic() < deadline:
                for i in (controller, follower):
                    v = part(c, i, topic, p)
                    assert v["leader"] == -1, "node %d: %s-%d led by %d with unclean election off (isr %s)" % (
                        i, topic, p, v["leader"], v["isr"])
                time.sleep(0.5)
            print("     %s-%d still offline %.0f s after node %d came back" % (
                topic, p, 3 * c.session_timeout_ms / 1000, follower), flush=True)
            return

        def unclean():
            for i in (controller, follower):
                v = part(c, i, topic, p)
                assert v["leader"] == follower, "node %d: leader %d" % (i, v["leader"])
                assert v["leader_epoch"] > epoch, "node %d: epoch %d" % (i, v["leader_epoch"])
                assert v["isr"] == [follower], "node %d: isr %s" % (i, v["isr"])
            return True
        wait_until(unclean, c.session_timeout_ms / 1000 + BOUND, "node %d to lead %s-%d uncleanly" % (
            follower, topic, p))
        assert list_offset(c, follower, topic, p) == 100, "the unclean leader's log end (without 'unsynced')"
        err, base = raw_produce(c, follower, topic, p, [(b"k", b"after")], acks=-1)
        assert (err, base) == (NONE, 100), "produce to the unclean leader: %d %d" % (err, base)


def main():
    binary = runnel_binary()
    tests = [
        ("1 replicas byte-identical across rolled segments", lambda: byte_identical_replicas(binary)),
        ("2 SIGSTOPped follower leaves the ISR by the lag rule, rejoins", lambda: paused_follower_lag_rule(binary)),
        ("3 two of three down: acks=all NOT_ENOUGH_REPLICAS, nothing appended; acks=1 works",
         lambda: two_of_three_down(binary)),
        ("4 divergence: old leader truncates to the new epoch, ends identical", lambda: divergence(binary)),
        ("5a unclean.leader.election.enable=false: stays offline", lambda: unclean_election(binary, False)),
        ("5b unclean.leader.election.enable=true: out-of-sync replica leads", lambda: unclean_election(binary, True)),
    ]
    only = sys.argv[2:]
    if only:
        tests = [t for t in tests if t[0].split()[0] in only or t[0].split()[0][0] in only]
    return run_tests(tests)


if __name__ == "__main__":
    sys.exit(main())
