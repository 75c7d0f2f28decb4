"""Three Runnel brokers on one etcd (label "cluster"): what every broker's
Metadata says of the cluster, CreateTopics' seed-rule placement from any
broker, NOT_LEADER_OR_FOLLOWER away from the leader, and confluent_kafka
producing to and consuming from partitions led by different brokers.

  /usr/bin/python3 compat-tests/cluster_metadata_test.py build/debug/runnel
"""

import sys
import time

from confluent_kafka import KafkaError, KafkaException

import kafka_wire as kw
from cluster_harness import (INVALID_REPLICATION_FACTOR, NONE, NOT_LEADER_OR_FOLLOWER, Cluster, consume,
                             create_topic, produce, records_for, run_tests, runnel_binary, seed_assignment)

PARTITIONS = 6  # twice the brokers: the rule wraps around
AGREE_WITHIN = 20.0  # CI machines are loaded


def main():
    binary = runnel_binary()
    # Kafka's session and heartbeat defaults: nothing here fails over, and a
    # loaded machine must not lapse a session in the middle (3000 ms did).
    with Cluster(3, binary, session_timeout_ms=9000, heartbeat_interval_ms=2000) as c:
        ids = [1, 2, 3]

        def brokers_and_controller():
            mds = {i: c.metadata(i) for i in ids}
            for i, md in mds.items():
                listed = {nid: (host, port) for nid, (host, port, _) in md["brokers"].items()}
                want = {j: ("127.0.0.1", c.port(j)) for j in ids}
                assert listed == want, "node %d lists %s, want %s" % (i, listed, want)
                # Kafka's rule: a live broker, never the active controller as
                # such; Runnel's: the answering broker, which the client reached.
                assert md["controller_id"] == i, "node %d names controller %d" % (i, md["controller_id"])
            assert c.etcd_controller() in ids, "etcd's controller key holds %s" % c.etcd_controller()
            cluster_ids = {md["cluster_id"] for md in mds.values()}
            assert len(cluster_ids) == 1, "cluster ids differ: %s" % cluster_ids
            # confluent_kafka's view, through each broker alone
            from cluster_harness import admin
            for i in ids:
                cm = admin(c.bootstrap([i])).list_topics(timeout=15)
                assert sorted(cm.brokers) == ids, "list_topics via %d: brokers %s" % (i, sorted(cm.brokers))
                # (librdkafka may ask any broker it has learnt of, not only the bootstrap one)
                assert cm.controller_id in ids, "list_topics via %d: controller %d" % (i, cm.controller_id)

        def seed_rule_admin_client():
            for rf in (1, 2, 3):
                create_topic(c.bootstrap(), "rf%d" % rf, PARTITIONS, rf)
            for rf in (1, 2, 3):
                c.wait_assignment("rf%d" % rf, seed_assignment(ids, PARTITIONS, rf), AGREE_WITHIN)
            # and as confluent_kafka's list_topics sees it
            from cluster_harness import admin
            cm = admin(c.bootstrap()).list_topics(timeout=15)
            for rf in (1, 2, 3):
                want = seed_assignment(ids, PARTITIONS, rf)
                got = {p: list(v.replicas) for p, v in cm.topics["rf%d" % rf].partitions.items()}
                assert got == want, "list_topics rf%d: %s, want %s" % (rf, got, want)
                leaders = {p: v.leader for p, v in cm.topics["rf%d" % rf].partitions.items()}
                assert leaders == {p: r[0] for p, r in want.items()}, "list_topics rf%d leaders %s" % (rf, leaders)

        def create_from_each_broker():
            # CreateTopics to every broker, the controller and the others alike
            for i in ids:
                name = "via-node-%d" % i
                res = c.create_topics_raw(i, [(name, 4, 3)])
                assert res[name][0] == NONE, "CreateTopics via node %d: %s" % (i, res)
            for i in ids:
                c.wait_assignment("via-node-%d" % i, seed_assignment(ids, 4, 3), AGREE_WITHIN)

        def rf4_is_invalid():
            try:
                create_topic(c.bootstrap(), "rf4", 3, 4)
            except KafkaException as e:
                err = e.args[0]
                assert err.code() == KafkaError.INVALID_REPLICATION_FACTOR, "rf 4: %s" % err
            else:
                raise AssertionError("rf 4 on 3 brokers was created")
            for i in ids:
                res = c.create_topics_raw(i, [("rf4-raw", 3, 4)])
                assert res["rf4-raw"][0] == INVALID_REPLICATION_FACTOR, "rf 4 via node %d: %s" % (i, res)
                md = c.metadata(i, ["rf4", "rf4-raw"])
                for t in ("rf4", "rf4-raw"):
                    assert md["topics"][t]["error"] != NONE, "node %d has topic %s: %s" % (i, t, md["topics"][t])

        def not_leader_or_follower():
            parts = c.partitions(1, "rf1")
            batch = kw.record_batch([(b"k", b"v", ())], int(time.time() * 1000))
            for p, v in parts.items():
                for i in ids:
                    if i == v["leader"]:
                        continue
                    body = c.call(i, lambda corr: kw.produce_v8(corr, 1, {"rf1": [(p, batch)]}))
                    err = kw.parse_produce_v8(body)[("rf1", p)][0]
                    assert err == NOT_LEADER_OR_FOLLOWER, "Produce rf1-%d (leader %d) to node %d: error %d" % (
                        p, v["leader"], i, err)
                    body = c.call(i, lambda corr: kw.fetch_v4(corr, "rf1", p, 0, max_wait_ms=0))
                    err = kw.parse_fetch_v4(body)[("rf1", p)][0]
                    assert err == NOT_LEADER_OR_FOLLOWER, "Fetch rf1-%d (leader %d) from node %d: error %d" % (
                        p, v["leader"], i, err)

        def clients_rf1():
            # partitions 0..5 led by 1,2,3,1,2,3: no replication needed
            records = [r for p in range(PARTITIONS) for r in records_for(p, 50, b"rf1")]
            offsets = produce(c.bootstrap(), "rf1", records, acks="1")
            for p in range(PARTITIONS):
                assert offsets.get(p) == list(range(50)), "rf1-%d offsets %s" % (p, offsets.get(p))
                got = [(k, v) for _, k, v in consume(c.bootstrap(), "rf1", p, 50)]
                assert got == [(k, v) for _, k, v in records_for(p, 50, b"rf1")], "rf1-%d read back wrong" % p
            # kafka-python too, every partition at once: fetches to all three leaders
            from kafka import KafkaConsumer, TopicPartition
            kc = KafkaConsumer(bootstrap_servers=c.bootstrap().split(","), group_id=None, enable_auto_commit=False,
                               consumer_timeout_ms=1000, request_timeout_ms=30000)
            try:
                tps = [TopicPartition("rf1", p) for p in range(PARTITIONS)]
                kc.assign(tps)
                kc.seek_to_beginning(*tps)
                seen = {}
                deadline = time.monotonic() + 30
                while sum(len(v) for v in seen.values()) < len(records) and time.monotonic() < deadline:
                    for tp, msgs in kc.poll(timeout_ms=500).items():
                        seen.setdefault(tp.partition, []).extend((m.key, m.value) for m in msgs)
            finally:
                kc.close()
            for p in range(PARTITIONS):
                assert seen.get(p) == [(k, v) for _, k, v in records_for(p, 50, b"rf1")], (
                    "kafka-python read rf1-%d: %d records" % (p, len(seen.get(p, []))))

        def clients_rf3_acks_all():
            create_topic(c.bootstrap(), "rf3-data", 3, 3, {"min.insync.replicas": "2"})
            c.wait_assignment("rf3-data", seed_assignment(ids, 3, 3), AGREE_WITHIN)
            records = [r for p in range(3) for r in records_for(p, 100, b"rf3")]
            offsets = produce(c.bootstrap(), "rf3-data", records, acks="all")
            for p in range(3):
                assert offsets.get(p) == list(range(100)), "rf3-data-%d offsets %s" % (p, offsets.get(p))
                got = [(k, v) for _, k, v in consume(c.bootstrap(), "rf3-data", p, 100)]
                assert got == [(k, v) for _, k, v in records_for(p, 100, b"rf3")], "rf3-data-%d read back wrong" % p

        rc = run_tests([
            ("every broker lists all three and names itself as controller", brokers_and_controller),
            ("rf 1, 2, 3 by AdminClient: seed-rule replicas on every broker", seed_rule_admin_client),
            ("CreateTopics sent to each broker: seed-rule replicas", create_from_each_broker),
            ("rf 4 on 3 brokers: INVALID_REPLICATION_FACTOR", rf4_is_invalid),
            ("Produce/Fetch away from the leader: NOT_LEADER_OR_FOLLOWER", not_leader_or_follower),
            ("confluent_kafka produce, both clients consume, rf 1, leaders on all brokers", clients_rf1),
            ("confluent_kafka produce acks=all/consume, rf 3 (replication)", clients_rf3_acks_all),
        ], c)
    return rc


if __name__ == "__main__":
    sys.exit(main())
