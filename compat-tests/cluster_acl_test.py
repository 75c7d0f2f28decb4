#!/usr/bin/python3
"""ACLs in a cluster (issue 15, labels "security" and "cluster"): three
brokers on a real etcd, each with Kafka's StandardAuthorizer and
allow.everyone.if.no.acl.found=true (so the test can grant itself the
cluster before any ACL exists).

  - an ACL created through one broker is listed by DescribeAcls on every
    broker and enforced by every broker (their watches apply the etcd key
    "acls", cluster/etcd/key_layout.h), and the key holds it;
  - a DENY WRITE refuses Produce on the partition's leader, wherever it was
    created; deleting it through another broker opens the topic again;
  - a PREFIXED DENY DESCRIBE hides exactly the topics under its prefix from
    every broker's Metadata;
  - a broker restarted, or down while an ACL is deleted, starts with the
    cluster's current ACLs.

Every connection is User:ANONYMOUS (plaintext) until TLS and SASL land; it
is given ALL on the cluster, which also lets the brokers' replica fetches
(CLUSTER_ACTION) through, as a Kafka cluster needs for its broker principal.

  /usr/bin/python3 compat-tests/cluster_acl_test.py build/debug/runnel
"""

import json
import sys
import time

from kafka import errors as kerrors
from kafka.admin import ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourceType

import kafka_wire as kw
from acl_admin import ME, AclAdmin, binding, error_class
from cluster_harness import Cluster, run_tests, runnel_binary, wait_until

BOUND = 60.0  # seconds: CI machines are loaded
NONE = 0
TOPIC_AUTH = 29
OVERRIDES = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
             "allow.everyone.if.no.acl.found": "true"}


def listed(c, node_id):
    """The bindings DescribeAcls on `node_id` lists."""
    with AclAdmin(c.brokers[node_id].bootstrap) as a:
        return a.listed()


def admin_on(c, node_id):
    return AclAdmin(c.brokers[node_id].bootstrap, client_id="acl-node-%d" % node_id)


def produce(c, node_id, topic):
    batch = kw.record_batch([(b"k", b"v", ())], int(time.time() * 1000))
    body = c.call(node_id, lambda corr: kw.produce_v8(corr, 1, {topic: [(0, batch)]}))
    return kw.parse_produce_v8(body)[(topic, 0)][0]


def topic_error(c, node_id, topic):
    t = c.metadata(node_id, [topic])["topics"].get(topic)
    return None if t is None else t["error"]


def test_acls_across_brokers():
    with Cluster(n=3, overrides=OVERRIDES, session_timeout_ms=10000, heartbeat_interval_ms=1000) as c:
        # A resource with any ACL is closed to everyone else (Kafka's rule:
        # allow.everyone only covers resources no ACL names), so this
        # principal takes ALL on the cluster and on every topic first.
        with admin_on(c, 1) as a:
            a.create(binding(ACLOperation.ALL, ResourceType.CLUSTER, "kafka-cluster"),
                     binding(ACLOperation.ALL, ResourceType.TOPIC, "*"))
        want = [("CLUSTER", "kafka-cluster", "LITERAL", ME, "*", "ALL", "ALLOW"),
                ("TOPIC", "*", "LITERAL", ME, "*", "ALL", "ALLOW")]
        for i in (1, 2, 3):
            wait_until(lambda: listed(c, i) == want, BOUND, "node %d to list the cluster ACL" % i)
        stored = json.loads(c.etcd_get("acls")["value"])
        eq_acls = sorted((a["resource_type"], a["resource_name"], a["operation"]) for a in stored["acls"])
        assert eq_acls == [("CLUSTER", "kafka-cluster", "ALL"), ("TOPIC", "*", "ALL")], stored

        for t in ("open-t", "hidden-1", "hiddenx"):
            # CREATE from ALL on the cluster, through any broker's image.
            errs = c.create_topics_raw(1, [(t, 1, 1)])
            assert errs[t][0] == NONE, errs
        leader = wait_until(lambda: c.partitions(1, "open-t")[0]["leader"], BOUND, "open-t's leader")
        assert produce(c, leader, "open-t") == NONE, "open-t before any topic ACL"

        # A DENY through a broker that is not the leader; the leader refuses.
        other = 1 if leader != 1 else 2
        deny_write = binding(ACLOperation.WRITE, ResourceType.TOPIC, "open-t", permission=ACLPermissionType.DENY,
                             principal="User:*")
        with admin_on(c, other) as a:
            a.create(deny_write)
        wait_until(lambda: produce(c, leader, "open-t") == TOPIC_AUTH, BOUND, "the leader to refuse open-t")
        for i in (1, 2, 3):
            assert topic_error(c, i, "open-t") == NONE, "DENY WRITE does not hide open-t from node %d" % i

        # A PREFIXED DENY DESCRIBE hides exactly its prefix, on every broker.
        hide = binding(ACLOperation.DESCRIBE, ResourceType.TOPIC, "hidden-", ACLResourcePatternType.PREFIXED,
                       ACLPermissionType.DENY)
        with admin_on(c, 3) as a:
            a.create(hide)
        for i in (1, 2, 3):
            wait_until(lambda: topic_error(c, i, "hidden-1") == TOPIC_AUTH, BOUND, "node %d to hide hidden-1" % i)
            assert topic_error(c, i, "hiddenx") == NONE, "hiddenx is not under hidden-"
            assert "hidden-1" not in c.metadata(i)["topics"], "node %d lists hidden-1" % i

        # A restarted broker loads the cluster's ACLs before it serves.
        c.restart(2)
        c.wait_formed(BOUND, "the cluster after node 2's restart")
        assert topic_error(c, 2, "hidden-1") == TOPIC_AUTH, "node 2 after its restart"
        assert len(listed(c, 2)) == 4, listed(c, 2)

        # Deleted through one broker while another is down: the one that
        # returns starts with the deletion.
        down = 3
        c.stop(down)
        with admin_on(c, 1 if leader != 1 else 2) as a:
            a.delete(deny_write, hide)
        if leader != down:
            wait_until(lambda: produce(c, leader, "open-t") == NONE, BOUND, "open-t writable again")
        c.start_broker(down)
        c.wait_formed(BOUND, "the cluster after node %d's return" % down)
        assert topic_error(c, down, "hidden-1") == NONE, "node %d still hides hidden-1" % down
        assert listed(c, down) == want, listed(c, down)
        for i in (1, 2, 3):
            wait_until(lambda: topic_error(c, i, "hidden-1") == NONE, BOUND, "node %d to show hidden-1" % i)
        if leader == down:
            wait_until(lambda: produce(c, leader, "open-t") == NONE, BOUND, "open-t writable again")
        # Kafka's validation, from any broker; nothing stored.
        with admin_on(c, 2) as a:
            result = a.client.create_acls([binding(ACLOperation.READ, ResourceType.CLUSTER, "not-kafka-cluster")])
        assert [error_class(e) for _, e in result["failed"]] == [kerrors.InvalidRequestError], result
        assert listed(c, 1) == want, listed(c, 1)


if __name__ == "__main__":
    runnel_binary()
    sys.exit(run_tests([("ACLs created, enforced and deleted across brokers", test_acls_across_brokers)]))
