"""Failover in a three-broker Runnel cluster (label "cluster"), each
scenario on a fresh cluster with a 3000 ms session timeout and 1000 ms
heartbeats:

  - kill -9 a partition's leader: within the session timeout plus BOUND the
    survivors' Metadata drops it and shows the next live ISR member leading
    with a bumped leader epoch; restarted, it is listed again, takes no
    leadership back, and keeps its replicas (and, replicated, its ISR place);
  - kill -9 the controller elected in etcd: a survivor is elected (etcd's
    controller key), the survivors' Metadata name live brokers only, and
    CreateTopics works again within the same bound, placed over the two
    live brokers;
  - SIGSTOP the leader past its session: it loses leadership, and after
    SIGCONT it answers Produce with NOT_LEADER_OR_FOLLOWER;
  - records acknowledged with acks=all (min.insync.replicas=2) survive a
    kill -9 of their leader (needs replication).

  /usr/bin/python3 compat-tests/cluster_failover_test.py build/debug/runnel
"""

import sys
import time

import kafka_wire as kw
from cluster_harness import (INVALID_REPLICATION_FACTOR, NONE, NOT_LEADER_OR_FOLLOWER, TOPIC_ALREADY_EXISTS,
                             Cluster, consume, create_topic, produce, records_for, run_tests, runnel_binary,
                             seed_assignment, wait_until)

SESSION_MS = 3000
HEARTBEAT_MS = 1000
BOUND = 20.0  # seconds on top of the session timeout: CI machines are loaded
FAILOVER_WITHIN = SESSION_MS / 1000 + BOUND
AGREE_WITHIN = 20.0
IDS = [1, 2, 3]


def new_cluster(binary):
    return Cluster(3, binary, session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS)


def snapshot(c, node_id, topic):
    return {p: dict(v) for p, v in c.partitions(node_id, topic).items()}


def wait_failover(c, dead, topic, before, started):
    """Every survivor drops `dead` from its broker list and shows each
    partition `dead` led led by the first of its replicas that was in the
    ISR and is alive, epoch bumped; the others keep their leaders. Returns
    the survivors' agreed partitions."""
    survivors = [i for i in c.live_ids() if i != dead]

    def expected_leader(v):
        if v["leader"] != dead:
            return v["leader"]
        for r in v["replicas"]:
            if r != dead and r in v["isr"] and r in survivors:
                return r
        return -1

    def moved():
        views = {}
        for i in survivors:
            md = c.metadata(i, [topic])
            assert dead not in md["brokers"], "node %d still lists node %d: %s" % (i, dead, sorted(md["brokers"]))
            assert md["controller_id"] in survivors, "node %d names controller %d" % (i, md["controller_id"])
            parts = md["topics"][topic]["partitions"]
            for p, old in before.items():
                now = parts[p]
                want = expected_leader(old)
                assert now["leader"] == want, "node %d: %s-%d leader %d, want %d (was %d, isr %s)" % (
                    i, topic, p, now["leader"], want, old["leader"], old["isr"])
                if old["leader"] == dead:
                    assert now["leader_epoch"] > old["leader_epoch"], "node %d: %s-%d epoch %d, was %d" % (
                        i, topic, p, now["leader_epoch"], old["leader_epoch"])
                assert now["replicas"] == old["replicas"], "node %d: %s-%d replicas %s, were %s" % (
                    i, topic, p, now["replicas"], old["replicas"])
            views[i] = parts
        return views
    views = wait_until(moved, FAILOVER_WITHIN, "leadership of node %d's partitions to move" % dead)
    print("     failover seen %.1f s after the kill (bound %.1f s)" % (time.monotonic() - started, FAILOVER_WITHIN),
          flush=True)
    return views[survivors[0]]


def non_controller_leader(c, topic, before):
    """(partition, its leader) for the first partition not led by the
    controller: a leader's failover apart from the controller's."""
    controller = c.etcd_controller()
    return next((p, v["leader"]) for p, v in sorted(before.items()) if v["leader"] != controller)


def leader_failover_and_rejoin(binary):
    with new_cluster(binary) as c:
        topic = "fo"
        create_topic(c.bootstrap(), topic, 3, 3)
        c.wait_assignment(topic, seed_assignment(IDS, 3, 3), AGREE_WITHIN)
        before = snapshot(c, 1, topic)
        _, dead = non_controller_leader(c, topic, before)

        started = time.monotonic()
        c.kill9(dead)
        after = wait_failover(c, dead, topic, before, started)
        for p, v in after.items():
            if before[p]["leader"] == dead:
                assert v["leader_epoch"] == before[p]["leader_epoch"] + 1, (
                    "%s-%d: epoch %d after one leader change from %d (Kafka bumps by one)" % (
                        topic, p, v["leader_epoch"], before[p]["leader_epoch"]))
        # Kafka's controller takes a fenced broker out of every ISR.
        isr_kept = {p: v["isr"] for p, v in after.items() if dead in v["isr"]}

        c.start_broker(dead)
        c.wait_formed(FAILOVER_WITHIN, "node %d to rejoin" % dead)

        def rejoined():
            for i in IDS:
                parts = c.partitions(i, topic)
                for p, v in parts.items():
                    assert v["replicas"] == before[p]["replicas"], "node %d: %s-%d replicas %s, were %s" % (
                        i, topic, p, v["replicas"], before[p]["replicas"])
                    assert v["leader"] == after[p]["leader"], "node %d: %s-%d leader %d after the rejoin, was %d" % (
                        i, topic, p, v["leader"], after[p]["leader"])
                    assert v["leader"] != dead, "node %d: the rejoined node %d leads %s-%d" % (i, dead, topic, p)
            return True
        wait_until(rejoined, AGREE_WITHIN, "every broker to agree on leaders after node %d rejoined" % dead)

        assert not isr_kept, "the killed node %d stayed in the ISR of %s after failover: %s" % (dead, topic, isr_kept)

        # Replicated: the restarted follower catches up and is back in every ISR.
        def back_in_isr():
            for i in IDS:
                for p, v in c.partitions(i, topic).items():
                    assert dead in v["isr"], "node %d: %s-%d isr %s" % (i, topic, p, v["isr"])
            return True
        wait_until(back_in_isr, AGREE_WITHIN, "node %d back in every ISR of %s" % (dead, topic))


def controller_failover(binary):
    with new_cluster(binary) as c:
        topic = "ctl"
        create_topic(c.bootstrap(), topic, 3, 3)
        c.wait_assignment(topic, seed_assignment(IDS, 3, 3), AGREE_WITHIN)
        before = snapshot(c, 1, topic)
        controller = c.etcd_controller()
        survivors = [i for i in IDS if i != controller]
        started = time.monotonic()
        c.kill9(controller)

        def new_controller():
            for i in survivors:
                md = c.metadata(i)
                assert controller not in md["brokers"], "node %d still lists node %d" % (i, controller)
                assert md["controller_id"] in survivors, "node %d names controller %d" % (i, md["controller_id"])
            elected = c.etcd_controller()
            assert elected in survivors, "etcd's controller key holds %s" % elected
            return elected
        now = wait_until(new_controller, FAILOVER_WITHIN, "a survivor to become controller")
        print("     node %d controller %.1f s after node %d was killed" % (now, time.monotonic() - started,
                                                                          controller), flush=True)
        # the partition the controller led moves too
        wait_failover(c, controller, topic, before, started)

        # CreateTopics again, sent to a survivor that is not the controller
        # when there is one: placed over the two live brokers.
        via = next((i for i in survivors if i != now), now)
        created = {}

        def create():
            res = c.create_topics_raw(via, [("after-controller", 4, 2)], timeout_ms=5000)
            err = res["after-controller"][0]
            assert err in (NONE, TOPIC_ALREADY_EXISTS), "CreateTopics via node %d: %s" % (via, res)
            created.setdefault("at", time.monotonic())
            return True
        wait_until(create, FAILOVER_WITHIN, "CreateTopics to work after the controller died", poll=0.5)
        assert created["at"] - started <= FAILOVER_WITHIN, "topic created %.1f s after the kill" % (
            created["at"] - started)
        c.wait_assignment("after-controller", seed_assignment(survivors, 4, 2), AGREE_WITHIN)
        res = c.create_topics_raw(via, [("rf3-on-two", 2, 3)])
        assert res["rf3-on-two"][0] == INVALID_REPLICATION_FACTOR, "rf 3 on two live brokers: %s" % res

        # The old controller comes back as an ordinary broker.
        c.start_broker(controller)
        c.wait_formed(FAILOVER_WITHIN, "node %d to rejoin" % controller)
        assert c.etcd_controller() == now, "etcd's controller key holds %s after node %d rejoined, was %d" % (
            c.etcd_controller(), controller, now)
        create_topic(c.bootstrap(), "after-rejoin", 3, 3)
        c.wait_assignment("after-rejoin", seed_assignment(IDS, 3, 3), AGREE_WITHIN)


def paused_leader(binary):
    with new_cluster(binary) as c:
        topic = "paused"
        create_topic(c.bootstrap(), topic, 3, 3)
        c.wait_assignment(topic, seed_assignment(IDS, 3, 3), AGREE_WITHIN)
        before = snapshot(c, 1, topic)
        p, leader = non_controller_leader(c, topic, before)
        started = time.monotonic()
        c.sigstop(leader)
        after = wait_failover(c, leader, topic, before, started)
        c.sigcont(leader)

        # Once it has heard, the old leader must refuse writes.
        def deposed():
            md = c.metadata(leader, [topic])
            own = md["topics"][topic]["partitions"][p]
            assert own["leader"] == after[p]["leader"], "node %d's own Metadata: leader %d, cluster says %d" % (
                leader, own["leader"], after[p]["leader"])
            return True
        wait_until(deposed, FAILOVER_WITHIN, "node %d to learn it no longer leads %s-%d" % (leader, topic, p))
        batch = kw.record_batch([(b"k", b"zombie", ())], int(time.time() * 1000))
        body = c.call(leader, lambda corr: kw.produce_v8(corr, -1, {topic: [(p, batch)]}, timeout_ms=5000))
        err = kw.parse_produce_v8(body)[(topic, p)][0]
        assert err == NOT_LEADER_OR_FOLLOWER, "Produce to the deposed leader %d: error %d" % (leader, err)
        c.wait_formed(FAILOVER_WITHIN, "node %d to be listed again after SIGCONT" % leader)


def acked_records_survive(binary):
    with new_cluster(binary) as c:
        topic = "durable"
        create_topic(c.bootstrap(), topic, 3, 3, {"min.insync.replicas": "2"})
        c.wait_assignment(topic, seed_assignment(IDS, 3, 3), AGREE_WITHIN)
        before = snapshot(c, 1, topic)
        p, dead = non_controller_leader(c, topic, before)
        first = records_for(p, 300, b"before")
        produce(c.bootstrap(), topic, first, acks="all")
        started = time.monotonic()
        c.kill9(dead)
        wait_failover(c, dead, topic, before, started)
        got = [(k, v) for _, k, v in consume(c.bootstrap(), topic, p, 300)]
        assert got == [(k, v) for _, k, v in first], "records acked before the kill read back wrong"
        second = records_for(p, 100, b"after")
        offsets = produce(c.bootstrap(), topic, second, acks="all")
        assert offsets[p] == list(range(300, 400)), "offsets after failover: %s" % offsets[p][:5]
        got = [(k, v) for _, k, v in consume(c.bootstrap(), topic, p, 400)]
        assert got == [(k, v) for _, k, v in first + second], "records read back wrong after failover"


def main():
    binary = runnel_binary()
    return run_tests([
        ("kill -9 a leader: new leader from the ISR, epoch bumped; it rejoins",
         lambda: leader_failover_and_rejoin(binary)),
        ("kill -9 the controller: a new one, CreateTopics works again", lambda: controller_failover(binary)),
        ("SIGSTOP the leader past its session: deposed, NOT_LEADER_OR_FOLLOWER", lambda: paused_leader(binary)),
        ("acks=all records survive a kill -9 of their leader (replication)", lambda: acked_records_survive(binary)),
    ])


if __name__ == "__main__":
    sys.exit(main())
