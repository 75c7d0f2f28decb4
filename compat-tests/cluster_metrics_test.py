"""/metrics and /v1/partitions in a three-broker cluster (label "cluster";
issue 17): every broker has an admin listener (runnel.admin.listeners=
http://127.0.0.1:0). With an rf 3 topic, min.insync.replicas=2:

  - exactly one broker reports itself the active controller, which counts
    the cluster's partitions and none offline; each broker's partition count
    is what it hosts and the leaders' counts add up to the partitions;
  - a SIGSTOPped follower leaves the ISR by the lag rule: the leader's
    UnderReplicatedPartitions and AtMinIsrPartitionCount become 1 and its
    IsrShrinks counter moves, /v1/partitions shows the ISR of two;
  - after SIGCONT it rejoins: IsrExpands moves and nothing is
    under-replicated on any broker.

  /usr/bin/python3 compat-tests/cluster_metrics_test.py build/debug/runnel
"""

import json
import sys
import time

from admin_http_test import get, scrape, value
from cluster_harness import Cluster, create_topic, produce, records_for, run_tests, runnel_binary, seed_assignment
from cluster_harness import wait_until

BOUND = 30.0  # seconds on top of any configured timeout: CI machines are loaded
IDS = [1, 2, 3]
TOPIC = "metrics-isr"


def metrics(c, node_id):
    return scrape(c.brokers[node_id].admin_port())


def gauge(c, node_id, name):
    return value(metrics(c, node_id), name)


def isr_scenario(binary):
    lag_ms, session_ms = 3000, 20000
    overrides = {"replica.lag.time.max.ms": str(lag_ms), "runnel.admin.listeners": "http://127.0.0.1:0"}
    with Cluster(3, binary, overrides=overrides, session_timeout_ms=session_ms, heartbeat_interval_ms=1000) as c:
        create_topic(c.bootstrap(), TOPIC, 1, 3, {"min.insync.replicas": "2"})
        c.wait_assignment(TOPIC, seed_assignment(IDS, 1, 3), BOUND)
        produce(c.bootstrap(), TOPIC, records_for(0, 100, b"before"), acks="all")

        def one_controller():
            active = [i for i in IDS if gauge(c, i, "kafka_controller_kafkacontroller_activecontrollercount") == 1]
            assert len(active) == 1, "active controllers: %s" % active
            return active[0]
        controller = wait_until(one_controller, BOUND, "one active controller")
        m = metrics(c, controller)
        partitions = value(m, "kafka_controller_kafkacontroller_globalpartitioncount")
        assert value(m, "kafka_controller_kafkacontroller_globaltopiccount") >= 1
        assert value(m, "kafka_controller_kafkacontroller_offlinepartitionscount") == 0
        leaders = sum(gauge(c, i, "kafka_server_replicamanager_leadercount") for i in IDS)
        assert leaders == partitions, "leaders %s of %s partitions" % (leaders, partitions)

        leader = c.partitions(IDS[0], TOPIC)[0]["leader"]
        follower = next(i for i in IDS if i not in (leader, controller))
        shrinks = gauge(c, leader, "kafka_server_replicamanager_isrshrinks_total")
        expands = gauge(c, leader, "kafka_server_replicamanager_isrexpands_total")
        c.sigstop(follower)
        produce(c.bootstrap([i for i in IDS if i != follower]), TOPIC, records_for(0, 10, b"behind"), acks="1")

        def shrunk():
            m = metrics(c, leader)
            assert value(m, "kafka_server_replicamanager_underreplicatedpartitions") == 1, "not under-replicated"
            assert value(m, "kafka_server_replicamanager_atminisrpartitioncount") == 1
            assert value(m, "kafka_server_replicamanager_underminisrpartitioncount") == 0
            assert value(m, "kafka_server_replicamanager_isrshrinks_total") == shrinks + 1
            return m
        wait_until(shrunk, lag_ms / 1000 * 1.5 + BOUND, "the leader to report node %d out of the ISR" % follower)
        status, _, body = get(c.brokers[leader].admin_port(), "/v1/partitions/" + TOPIC)
        assert status == 200, status
        assert sorted(json.loads(body)[0]["isr"]) == sorted(i for i in IDS if i != follower), body

        c.sigcont(follower)

        def rejoined():
            for i in IDS:
                assert gauge(c, i, "kafka_server_replicamanager_underreplicatedpartitions") == 0, "node %d" % i
            assert gauge(c, leader, "kafka_server_replicamanager_isrexpands_total") == expands + 1
            return True
        wait_until(rejoined, BOUND, "node %d back in the ISR, by the metrics" % follower)


def main():
    binary = runnel_binary()
    sys.exit(run_tests([("ISR shrink and expand seen in /metrics", lambda: isr_scenario(binary))]))


if __name__ == "__main__":
    main()
