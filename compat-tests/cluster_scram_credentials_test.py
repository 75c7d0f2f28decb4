#!/usr/bin/python3
"""SCRAM users in a cluster (labels "security" and "cluster"): three brokers
on a real etcd, users managed with Kafka 4.1.1's kafka-configs (jars as for
cluster_kafka_tools_test):

  - a credential set through one broker is listed by every broker's own
    DescribeUserScramCredentials (each broker applies the etcd key
    "scram_credentials", cluster/etcd/key_layout.h, from its watch), and the
    key holds the StoredKey and ServerKey derived from the password, not the
    password;
  - one deleted through another broker is gone from every broker;
  - a broker down while a user is altered, and restarted, lists the
    cluster's current credentials.

  /usr/bin/python3 compat-tests/cluster_scram_credentials_test.py build/debug/runnel <kafka jar cache dir>
"""

import sys

from cluster_harness import Cluster, run_tests, runnel_binary, wait_until
from kafka_harness import kafka_classpath
from scram_admin import ConfigsTool, check_stored, described, describe_raw

BOUND = 60.0  # seconds: CI machines are loaded
TOOL = None  # ConfigsTool, from argv


def listed(c, node_id):
    """{user: {mechanism: iterations}} of node_id's own DescribeUserScramCredentials."""
    error, results = describe_raw(c.port(node_id))
    assert error == 0, "node %d: error %d" % (node_id, error)
    return {user: infos for user, (code, _, infos) in results.items() if code == 0}


def every_broker_lists(c, node_ids, want, what):
    for i in node_ids:
        wait_until(lambda: listed(c, i) == want, BOUND, "node %d to list %s" % (i, what))


def test_credentials_across_brokers():
    with Cluster(n=3, session_timeout_ms=10000, heartbeat_interval_ms=1000) as c:
        one = "127.0.0.1:%d" % c.port(1)
        TOOL.add(one, "alice", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]")
        every_broker_lists(c, (1, 2, 3), {"alice": {"SCRAM-SHA-256": 8192}}, "alice's SCRAM-SHA-256")
        check_stored(c.etcd_get("scram_credentials")["value"].decode(), "alice", "SCRAM-SHA-256", "alice-secret",
                     8192)

        # Through another broker, on top of what the first one wrote.
        two = "127.0.0.1:%d" % c.port(2)
        TOOL.add(two, "alice", "SCRAM-SHA-512=[password=alice-secret]")
        TOOL.add(two, "bob", "SCRAM-SHA-512=[iterations=16384,password=bob-secret]")
        both = {"alice": {"SCRAM-SHA-256": 8192, "SCRAM-SHA-512": 4096}, "bob": {"SCRAM-SHA-512": 16384}}
        every_broker_lists(c, (1, 2, 3), both, "alice's and bob's credentials")
        assert described(TOOL.describe(c.bootstrap())) == both

        # A broker down while bob's credential is deleted starts with the cluster's.
        c.stop(3)
        three_gone = {"alice": {"SCRAM-SHA-256": 8192, "SCRAM-SHA-512": 4096}}
        TOOL.delete(one, "bob", "SCRAM-SHA-512")
        every_broker_lists(c, (1, 2), three_gone, "bob deleted")
        c.start_broker(3)
        c.wait_formed(BOUND, "node 3 back in the cluster")
        every_broker_lists(c, (3,), three_gone, "the credentials after its restart")

        three = "127.0.0.1:%d" % c.port(3)
        TOOL.delete(three, "alice", "SCRAM-SHA-256")
        every_broker_lists(c, (1, 2, 3), {"alice": {"SCRAM-SHA-512": 4096}}, "alice's SCRAM-SHA-256 deleted")
        stored = c.etcd_get("scram_credentials")["value"].decode()
        check_stored(stored, "alice", "SCRAM-SHA-512", "alice-secret", 4096)
        assert "bob" not in stored, stored


if __name__ == "__main__":
    runnel_binary()
    TOOL = ConfigsTool(kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None))
    sys.exit(run_tests([("SCRAM credentials altered and listed across brokers", test_credentials_across_brokers)]))
