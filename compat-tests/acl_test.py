#!/usr/bin/python3
"""ACLs (issue 15) against real Runnel processes, label "security".

Until TLS and SASL land every connection is User:ANONYMOUS (Kafka's
principal on PLAINTEXT), so ACLs for User:ANONYMOUS decide what these
plaintext clients may do; super.users=User:ANONYMOUS makes them super users.
The broker runs authorizer.class.name=org.apache.kafka.metadata.authorizer.
StandardAuthorizer with allow.everyone.if.no.acl.found=false (Kafka's default).

  - no authorizer: the ACL APIs answer SECURITY_DISABLED;
  - Kafka 4.1.1's kafka-acls (org.apache.kafka.tools.AclCommand) --add,
    --list and --remove round trips, surviving restarts (single node: the
    ACLs in the log dir);
  - kafka-python's admin create_acls / describe_acls / delete_acls, with
    LITERAL, PREFIXED, MATCH and ANY filters and Kafka's INVALID_REQUEST;
  - a deny test per API family (produce, fetch, groups and offsets, topic
    admin, configs, ACL admin, cluster APIs): without an ACL Kafka's code,
    with one success, a DENY over an ALLOW, a PREFIXED ACL covering exactly
    its prefix; confluent-kafka consumes in a group once READ is granted;
    kafka-topics --list and --describe show exactly the describable topics;
  - an IPv6 client (a second listener on ::1) is the host 0:0:0:0:0:0:0:1,
    as Kafka writes it: a DENY for that host refuses it and not the IPv4
    client.

confluent-kafka 1.7.0 (Debian's) has no ACL admin calls, so kafka-python's
and Kafka's CLI drive the ACL APIs; the other APIs are sent hand-built
(kafka_wire) so each answer is read as the broker gave it.

  /usr/bin/python3 compat-tests/acl_test.py build/debug/runnel <kafka jar cache dir>
"""

import contextlib
import re
import subprocess
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource
from kafka import errors as kerrors
from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePatternFilter,
                         ResourceType)

import kafka_wire as w
from acl_admin import ANY_FILTER, AclAdmin, as_filter, binding, error_class
from kafka_harness import kafka_classpath
from runnel_harness import Runnel, run_tests, runnel_binary

BOUND = 60.0  # seconds: CI machines are loaded
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "allow.everyone.if.no.acl.found": "false"}
SUPER = dict(AUTHORIZER, **{"super.users": "User:ANONYMOUS"})

# Kafka's error codes.
NONE = 0
TOPIC_AUTH = 29
GROUP_AUTH = 30
CLUSTER_AUTH = 31
INVALID_REQUEST = 42
SECURITY_DISABLED = 54

JARS = None  # the kafka jar cache dir, from argv


def eq(got, want, what):
    assert got == want, "%s: got %r, want %r" % (what, got, want)


# ------------------------------------------------------------ the ACL admin

def admin(broker):
    """kafka-python's client itself, for the calls that check its answers."""
    return AclAdmin(broker.bootstrap).client


def grant(broker, *acls):
    with AclAdmin(broker.bootstrap) as a:
        a.create(*acls)


def revoke(broker, *acls):
    with AclAdmin(broker.bootstrap) as a:
        a.delete(*acls)


def all_acls(broker, acl_filter=ANY_FILTER):
    with AclAdmin(broker.bootstrap) as a:
        return a.listed(acl_filter)


# ------------------------------------------------------ hand-built requests

def call(broker, frame, correlation_id):
    with w.Connection(broker.port, timeout=BOUND) as c:
        return c.call(frame, correlation_id)


def produce(broker, topic):
    batch = w.record_batch([(b"k", b"v", ())], int(time.time() * 1000))
    body = call(broker, w.produce_v8(1, 1, {topic: [(0, batch)]}), 1)
    return w.parse_produce_v8(body)[(topic, 0)][0]


def fetch(broker, topic):
    return w.parse_fetch_v4(call(broker, w.fetch_v4(2, topic, 0, 0, max_wait_ms=100), 2))[(topic, 0)]


def list_offsets(broker, topic):
    return w.parse_list_offsets_v1(call(broker, w.list_offsets_v1(3, topic, [0]), 3))[(topic, 0)][0]


def metadata(broker, topics=None, auto_create=False):
    """-> {name: error_code} (v7)."""
    parsed = w.parse_metadata_v7(call(broker, w.metadata_v7(4, topics, auto_create), 4))
    return {name: t["error"] for name, t in parsed["topics"].items()}


def authorized_operations(broker, topic):
    """Metadata v8 asking for both KIP-430 fields: -> (cluster's, topic's) bit sets."""
    body = w.array([w.string(topic)]) + w.i8(0) + w.i8(1) + w.i8(1)
    r = w.Reader(call(broker, w.request(3, 8, 17, body), 17))
    r.i32()  # throttle
    r.array(lambda r: (r.i32(), r.string(), r.i32(), r.string()))  # brokers
    r.string()  # cluster id
    r.i32()  # controller

    def partition(r):
        r.i16(), r.i32(), r.i32(), r.i32()
        for _ in range(3):
            r.array(lambda r: r.i32())

    def one(r):
        r.i16(), r.string(), r.i8()
        r.array(partition)
        return r.i32()

    (topic_ops,) = r.array(one)
    return r.i32(), topic_ops


def bits(*ops):
    return sum(1 << op.value for op in ops)


def find_coordinator(broker, group):
    return w.parse_find_coordinator_v1(call(broker, w.find_coordinator_v1(5, group, 0), 5))[0]


def offset_commit(broker, group, topic, offset):
    """OffsetCommit v2, a standalone commit: -> the partition's error."""
    body = (w.string(group) + w.i32(-1) + w.string("") + w.i64(-1) +
            w.array([w.string(topic) + w.array([w.i32(0) + w.i64(offset) + w.string("")])]))
    r = w.Reader(call(broker, w.request(8, 2, 6, body), 6))
    out = w.read_partitions(r, lambda r: r.i16())
    return out[(topic, 0)]


def offset_fetch(broker, group, topic):
    """OffsetFetch v3: -> (top-level error, partition error, offset)."""
    body = w.string(group) + w.array([w.string(topic) + w.array([w.i32(0)])])
    r = w.Reader(call(broker, w.request(9, 3, 7, body), 7))
    r.i32()  # throttle
    parts = w.read_partitions(r, lambda r: (r.i64(), r.string(), r.i16()))
    top = r.i16()
    offset, _, err = parts.get((topic, 0), (-1, None, None))
    return top, err, offset


def describe_group(broker, group, version=0):
    """DescribeGroups v0: -> the group's error; v3 (asking for KIP-430's
    field): -> (error, authorized operations)."""
    body = w.array([w.string(group)]) + (w.i8(1) if version >= 3 else b"")
    r = w.Reader(call(broker, w.request(15, version, 8, body), 8))
    if version >= 1:
        r.i32()  # throttle

    def member(r):
        fields = (r.string(), r.string(), r.string())
        r.take(r.i32())  # metadata
        r.take(r.i32())  # assignment
        return fields

    (g,) = r.array(lambda r: (r.i16(), r.string(), r.string(), r.string(), r.string(), r.array(member),
                              r.i32() if version >= 3 else None))
    return g[0] if version < 3 else (g[0], g[6])


def list_groups(broker):
    r = w.Reader(call(broker, w.request(16, 0, 9, b""), 9))
    err = r.i16()
    return err, sorted(g for g, _ in r.array(lambda r: (r.string(), r.string())))


def group_call_errors(broker, group):
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup (v0 each) for `group`,
    and OffsetDelete (v0) of acl-f: -> {api: error}."""
    out = {}
    join = w.string(group) + w.i32(10000) + w.string("") + w.string("consumer") + w.array(
        [w.string("range") + w.bytes_(b"")])
    out["JoinGroup"] = w.Reader(call(broker, w.request(11, 0, 19, join), 19)).i16()
    sync = w.string(group) + w.i32(1) + w.string("m") + w.array([])
    out["SyncGroup"] = w.Reader(call(broker, w.request(14, 0, 20, sync), 20)).i16()
    heartbeat = w.string(group) + w.i32(1) + w.string("m")
    out["Heartbeat"] = w.Reader(call(broker, w.request(12, 0, 21, heartbeat), 21)).i16()
    out["LeaveGroup"] = w.Reader(call(broker, w.request(13, 0, 22, w.string(group) + w.string("m")), 22)).i16()
    delete = w.string(group) + w.array([w.string("acl-f") + w.array([w.i32(0)])])
    out["OffsetDelete"] = w.Reader(call(broker, w.request(47, 0, 23, delete), 23)).i16()
    return out


def delete_group(broker, group):
    r = w.Reader(call(broker, w.request(42, 0, 10, w.array([w.string(group)])), 10))
    r.i32()
    return r.array(lambda r: (r.string(), r.i16()))[0][1]


def create_topic(broker, name, partitions=1):
    return w.parse_create_topics_v4(call(broker, w.create_topics_v4(11, [(name, partitions, 1)]), 11))[0][1]


def create_topic_v5(broker, name):
    """CreateTopics v5 (flexible): -> (error, partitions, replication factor,
    configs or None, TopicConfigErrorCode (tag 0))."""
    def cstr(v):
        return w.uvarint(len(v) + 1) + v.encode()

    topic = cstr(name) + w.i32(1) + w.i16(1) + w.uvarint(1) + w.uvarint(1) + w.uvarint(0)  # no assignments, configs
    body = w.uvarint(2) + topic + w.i32(30000) + w.i8(0) + w.uvarint(0)
    r = w.Reader(call(broker, w.request(19, 5, 18, body, flexible=True), 18))
    r.skip_tags()  # response header v1
    r.i32()  # throttle
    assert r.uvarint() == 2, "one topic answered"
    r.compact_string()
    err = r.i16()
    r.compact_string()  # message
    partitions, rf = r.i32(), r.i16()
    n = r.uvarint()
    configs = None if n == 0 else []
    for _ in range(max(n - 1, 0)):
        configs.append(r.compact_string())
        r.compact_string()
        r.take(3)  # read only, source, sensitive
        r.skip_tags()
    config_error = NONE
    for _ in range(r.uvarint()):
        tag, size = r.uvarint(), r.uvarint()
        data = r.take(size)
        if tag == 0:
            config_error = w.Reader(data).i16()
    return err, partitions, rf, configs, config_error


def create_partitions(broker, name, count):
    return w.parse_create_partitions_v1(call(broker, w.create_partitions_v1(12, [(name, count)]), 12))[0][1]


def delete_topic(broker, name):
    """DeleteTopics v1: -> the topic's error."""
    r = w.Reader(call(broker, w.request(20, 1, 13, w.array([w.string(name)]) + w.i32(30000)), 13))
    r.i32()
    return r.array(lambda r: (r.string(), r.i16()))[0][1]


def delete_records(broker, topic):
    return w.parse_delete_records_v1(call(broker, w.delete_records_v1(14, topic, [(0, 0)]), 14))[(topic, 0)][0]


def init_producer_id(broker):
    return w.parse_init_producer_id(call(broker, w.init_producer_id_v0(15), 15))[0]


def list_reassignments(broker):
    """ListPartitionReassignments v0 (flexible): -> the top-level error."""
    body = w.i32(30000) + w.uvarint(0) + w.uvarint(0)  # every partition (null topics), no tags
    r = w.Reader(call(broker, w.request(46, 0, 16, body, flexible=True), 16))
    assert r.i8() == 0, "tagged fields in the response header"
    r.i32()  # throttle
    return r.i16()


@contextlib.contextmanager
def group_consumer(broker, group, **config):
    """A confluent-kafka consumer of acl-f in `group`, closed on leaving `with`."""
    c = Consumer(dict({"bootstrap.servers": broker.bootstrap, "group.id": group, "auto.offset.reset": "earliest"},
                      **{k.replace("_", "."): v for k, v in config.items()}))
    try:
        c.subscribe(["acl-f"])
        yield c
    finally:
        c.close()


def first_poll(consumer, wanted):
    """The first message (or error event) `wanted` accepts, polled for at most BOUND seconds; None if none came."""
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        m = consumer.poll(1.0)
        if m is not None and wanted(m):
            return m
    return None


def describe_log_dirs(broker):
    """DescribeLogDirs v1 of every partition: -> how many log dirs answered."""
    r = w.Reader(call(broker, w.request(35, 1, 24, w.i32(-1)), 24))
    r.i32()  # throttle
    return r.i32()


def elect_leaders(broker, topic):
    """ElectLeaders v1 (PREFERRED) of partition 0: -> the top-level error."""
    body = w.i8(0) + w.array([w.string(topic) + w.array([w.i32(0)])]) + w.i32(30000)
    r = w.Reader(call(broker, w.request(43, 1, 25, body), 25))
    r.i32()  # throttle
    return r.i16()


def alter_reassignments(broker):
    """AlterPartitionReassignments v0 (flexible) of nothing: -> the top-level error."""
    body = w.i32(30000) + w.uvarint(1) + w.uvarint(0)
    r = w.Reader(call(broker, w.request(45, 0, 26, body, flexible=True), 26))
    r.skip_tags()
    r.i32()  # throttle
    return r.i16()


def config_error(future):
    """The KafkaError code a confluent-kafka admin future fails with, or NONE."""
    try:
        future.result(timeout=BOUND)
        return NONE
    except KafkaException as e:
        return e.args[0].code()


def confluent_admin(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap, "socket.timeout.ms": 30000})


# ------------------------------------------------------------------- tests

def test_security_disabled():
    with Runnel() as b:
        a = admin(b)
        try:
            try:
                a.describe_acls(ANY_FILTER)
                raise AssertionError("DescribeAcls without an authorizer succeeded")
            except kerrors.SecurityDisabledError:
                pass
            result = a.create_acls([binding(ACLOperation.READ, ResourceType.TOPIC, "t")])
            eq(len(result["failed"]), 1, "CreateAcls without an authorizer")
            eq(error_class(result["failed"][0][1]), kerrors.SecurityDisabledError, "its error")
        finally:
            a.close()
        # Nothing else changed: produce works as always.
        eq(create_topic(b, "open"), NONE, "CreateTopics without an authorizer")
        eq(produce(b, "open"), NONE, "Produce without an authorizer")


def kafka_tool(main, broker, *args):
    cmd = ["java", "-Dlog4j2.level=ERROR", "-cp", kafka_classpath(JARS), main, "--bootstrap-server", broker.bootstrap,
           *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, "%s %s exited %d:\n%s%s" % (main.rsplit(".", 1)[1], " ".join(args), out.returncode,
                                                             out.stdout, out.stderr)
    return out.stdout


def acls_cli(broker, *args):
    return kafka_tool(ACL_COMMAND, broker, *args)


def cli_listing(text):
    """kafka-acls --list's ACL lines, normalised: {(resource, entry)}."""
    out = set()
    resource = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Current ACLs for resource"):
            resource = line[line.index("`") + 1:line.rindex("`")]
        elif line.startswith("(principal="):
            out.add((resource, line))
    return out


def test_cli_round_trip():
    with Runnel(overrides=SUPER) as b:
        acls_cli(b, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe",
                 "--topic", "orders", "--group", "billing")
        acls_cli(b, "--add", "--deny-principal", "User:bob", "--deny-host", "10.0.0.7", "--operation", "Write",
                 "--topic", "app-", "--resource-pattern-type", "prefixed")
        acls_cli(b, "--add", "--allow-principal", "User:*", "--operation", "IdempotentWrite", "--cluster")
        listed = cli_listing(acls_cli(b, "--list"))
        want = {
            ("ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)",
             "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"),
            ("ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)",
             "(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)"),
            ("ResourcePattern(resourceType=GROUP, name=billing, patternType=LITERAL)",
             "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"),
            ("ResourcePattern(resourceType=GROUP, name=billing, patternType=LITERAL)",
             "(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)"),
            ("ResourcePattern(resourceType=TOPIC, name=app-, patternType=PREFIXED)",
             "(principal=User:bob, host=10.0.0.7, operation=WRITE, permissionType=DENY)"),
            ("ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)",
             "(principal=User:*, host=*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW)"),
        }
        eq(listed, want, "kafka-acls --list")
        # --list --topic: a LITERAL filter (kafka-acls' default pattern type).
        eq({x for x in cli_listing(acls_cli(b, "--list", "--topic", "orders"))}, {x for x in want if "orders" in x[0]},
           "kafka-acls --list --topic orders")
        b.restart()
        eq(cli_listing(acls_cli(b, "--list")), want, "kafka-acls --list after a restart")
        b.restart(graceful=False)
        eq(cli_listing(acls_cli(b, "--list")), want, "kafka-acls --list after SIGKILL")
        acls_cli(b, "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Describe",
                 "--topic", "orders", "--group", "billing")
        acls_cli(b, "--remove", "--force", "--topic", "app-", "--resource-pattern-type", "prefixed")
        left = {x for x in want if "DESCRIBE" not in x[1] and "app-" not in x[0]}
        eq(cli_listing(acls_cli(b, "--list")), left, "kafka-acls --list after --remove")
        b.restart()
        eq(cli_listing(acls_cli(b, "--list")), left, "kafka-acls --list after --remove and a restart")


def test_admin_client_filters():
    T, G, C = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
    P = ACLResourcePatternType.PREFIXED
    with Runnel(overrides=SUPER) as b:
        created = [
            binding(ACLOperation.READ, T, "orders", principal="User:alice"),
            binding(ACLOperation.WRITE, T, "*", principal="User:bob"),
            binding(ACLOperation.READ, T, "ord", P, ACLPermissionType.DENY, principal="User:carol"),
            binding(ACLOperation.READ, G, "orders", principal="User:alice", host="10.1.1.1"),
            binding(ACLOperation.ALTER, C, "kafka-cluster", principal="User:ops"),
        ]
        grant(b, *created)
        grant(b, created[0])  # again: succeeds, stored once
        eq(len(all_acls(b)), 5, "every binding once")

        def count(resource_type, name, pattern, **entry):
            f = ACLFilter(principal=entry.get("principal"), host=entry.get("host"),
                          operation=entry.get("operation", ACLOperation.ANY),
                          permission_type=entry.get("permission", ACLPermissionType.ANY),
                          resource_pattern=ResourcePatternFilter(resource_type, name, pattern))
            return len(all_acls(b, f))

        eq(count(T, None, ACLResourcePatternType.ANY), 3, "every TOPIC binding")
        eq(count(ResourceType.ANY, "orders", ACLResourcePatternType.ANY), 2, "ANY pattern named orders")
        eq(count(T, "orders", ACLResourcePatternType.MATCH), 3, "MATCH orders: literal, * and the ord prefix")
        eq(count(T, "xyz", ACLResourcePatternType.MATCH), 1, "MATCH xyz: only *")
        eq(count(T, None, P), 1, "PREFIXED only")
        eq(count(ResourceType.ANY, None, ACLResourcePatternType.ANY, principal="User:alice"), 2, "alice's")
        eq(count(ResourceType.ANY, None, ACLResourcePatternType.ANY, host="10.1.1.1"), 1, "from 10.1.1.1")
        eq(count(ResourceType.ANY, None, ACLResourcePatternType.ANY, permission=ACLPermissionType.DENY), 1, "DENYs")

        # Kafka's validation: INVALID_REQUEST, the valid creations stored.
        a = admin(b)
        try:
            result = a.create_acls([binding(ACLOperation.ALTER, C, "my-cluster"),
                                    binding(ACLOperation.READ, T, "fine", principal="User:dave")])
            eq([error_class(e) for _, e in result["failed"]], [kerrors.InvalidRequestError], "a CLUSTER not kafka-cluster")
            eq(len(result["succeeded"]), 1, "the valid creation beside it")
            # One filter deleting two bindings; another matching nothing.
            results = a.delete_acls([
                ACLFilter(principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                          resource_pattern=ResourcePatternFilter(T, "orders", ACLResourcePatternType.MATCH)),
                ACLFilter(principal="User:nobody", host=None, operation=ACLOperation.ANY,
                          permission_type=ACLPermissionType.ANY,
                          resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)),
            ])
            eq(sorted(x.resource_pattern.resource_name for x, _ in results[0][1]), ["*", "ord", "orders"],
               "deleted by MATCH orders")
            eq(results[1][1], [], "deleted by a filter matching nothing")
        finally:
            a.close()
        b.restart()
        eq(sorted(x[1] for x in all_acls(b)), ["fine", "kafka-cluster", "orders"], "left after a restart")


def test_api_families():
    T, G, C = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
    D = ACLPermissionType.DENY
    P = ACLResourcePatternType.PREFIXED
    step_times = {}

    def timed(name, fn):
        start = time.monotonic()
        fn()
        step_times[name] = time.monotonic() - start

    with Runnel(overrides=AUTHORIZER) as b:
        def acl_admin():
            # No ACLs, no super user: the ACL APIs need the cluster's ALTER / DESCRIBE.
            a = admin(b)
            try:
                result = a.create_acls([binding(ACLOperation.ALTER, C, "kafka-cluster")])
                eq([error_class(e) for _, e in result["failed"]], [kerrors.ClusterAuthorizationFailedError],
                   "CreateAcls without ALTER on the cluster")
                try:
                    a.describe_acls(ANY_FILTER)
                    raise AssertionError("DescribeAcls without DESCRIBE on the cluster succeeded")
                except kerrors.ClusterAuthorizationFailedError:
                    pass
            finally:
                a.close()
            # A super user grants ALTER on the cluster (and the topics the
            # steps use); without super.users again that grant is what lets
            # this principal manage ACLs, and a DENY DESCRIBE beats it for
            # DescribeAcls alone.
            b.overrides = SUPER
            b.restart()
            for t in ("acl-t", "acl-f", "pfx-a", "pfxa", "xpfx-a"):
                eq(create_topic(b, t), NONE, "creating %s as a super user" % t)
            eq(find_coordinator(b, "unnamed"), NONE, "FindCoordinator as a super user (creates __consumer_offsets)")
            eq(offset_commit(b, "unnamed", "acl-f", 0), NONE, "a group no ACL will name, as a super user")
            grant(b, binding(ACLOperation.ALTER, C, "kafka-cluster"))
            b.overrides = AUTHORIZER
            b.restart()
            eq(len(all_acls(b)), 1, "DescribeAcls with ALTER (implying DESCRIBE) on the cluster")
            grant(b, binding(ACLOperation.DESCRIBE, C, "kafka-cluster", permission=D))
            try:
                all_acls(b)
                raise AssertionError("DescribeAcls with DENY DESCRIBE on the cluster succeeded")
            except kerrors.ClusterAuthorizationFailedError:
                pass
            revoke(b, binding(ACLOperation.DESCRIBE, C, "kafka-cluster", permission=D))
            eq(len(all_acls(b)), 1, "DescribeAcls once the DENY is gone")

        def cluster_apis():
            # InitProducerId: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic.
            eq(init_producer_id(b), CLUSTER_AUTH, "InitProducerId with neither")
            grant(b, binding(ACLOperation.WRITE, T, "acl-", P))
            eq(init_producer_id(b), NONE, "InitProducerId with WRITE on a topic prefix")
            grant(b, binding(ACLOperation.WRITE, T, "*", permission=D, principal="User:*"))
            eq(init_producer_id(b), CLUSTER_AUTH, "InitProducerId with WRITE denied on every topic")
            grant(b, binding(ACLOperation.IDEMPOTENT_WRITE, C, "kafka-cluster"))
            eq(init_producer_id(b), NONE, "InitProducerId with IDEMPOTENT_WRITE")
            revoke(b, binding(ACLOperation.WRITE, T, "acl-", P),
                   binding(ACLOperation.WRITE, T, "*", permission=D, principal="User:*"),
                   binding(ACLOperation.IDEMPOTENT_WRITE, C, "kafka-cluster"))
            # ListPartitionReassignments, DescribeLogDirs: DESCRIBE on the
            # cluster (ALTER implies it).
            eq(list_reassignments(b), NONE, "ListPartitionReassignments with ALTER on the cluster")
            eq(describe_log_dirs(b), 1, "DescribeLogDirs with ALTER on the cluster: the one log dir")
            grant(b, binding(ACLOperation.DESCRIBE, C, "kafka-cluster", permission=D))
            eq(list_reassignments(b), CLUSTER_AUTH, "ListPartitionReassignments with DESCRIBE denied")
            eq(describe_log_dirs(b), 0, "DescribeLogDirs with DESCRIBE denied: no log dirs")
            revoke(b, binding(ACLOperation.DESCRIBE, C, "kafka-cluster", permission=D))
            # ElectLeaders, AlterPartitionReassignments and the ACL APIs
            # themselves: ALTER on the cluster, which a DENY overrides; only
            # a super user can take that DENY away again.
            eq(elect_leaders(b, "acl-t"), NONE, "ElectLeaders with ALTER on the cluster")
            eq(alter_reassignments(b), NONE, "AlterPartitionReassignments with ALTER")
            deny_alter = binding(ACLOperation.ALTER, C, "kafka-cluster", permission=D)
            grant(b, deny_alter)
            eq(elect_leaders(b, "acl-t"), CLUSTER_AUTH, "ElectLeaders with ALTER denied")
            eq(alter_reassignments(b), CLUSTER_AUTH, "AlterPartitionReassignments with ALTER denied")
            a = admin(b)
            try:
                result = a.create_acls([binding(ACLOperation.READ, T, "any")])
                eq([error_class(e) for _, e in result["failed"]], [kerrors.ClusterAuthorizationFailedError],
                   "CreateAcls with a DENY ALTER over the ALLOW")
                eq(error_class(a.delete_acls([as_filter(deny_alter)])[0][2]), kerrors.ClusterAuthorizationFailedError,
                   "DeleteAcls with a DENY ALTER over the ALLOW")
            finally:
                a.close()
            b.overrides = SUPER
            b.restart()
            revoke(b, deny_alter)
            b.overrides = AUTHORIZER
            b.restart()

        def produce_family():
            eq(produce(b, "acl-t"), TOPIC_AUTH, "Produce without WRITE")
            grant(b, binding(ACLOperation.WRITE, T, "acl-t"))
            eq(produce(b, "acl-t"), NONE, "Produce with WRITE")
            grant(b, binding(ACLOperation.WRITE, T, "acl-t", permission=D, principal="User:*"))
            eq(produce(b, "acl-t"), TOPIC_AUTH, "Produce with WRITE and a DENY WRITE for User:*")
            revoke(b, binding(ACLOperation.WRITE, T, "acl-t", permission=D, principal="User:*"))
            eq(produce(b, "acl-t"), NONE, "Produce once the DENY is gone")
            # KIP-430: the real operations, implied DESCRIBE included.
            eq(authorized_operations(b, "acl-t"),
               (bits(ACLOperation.ALTER, ACLOperation.DESCRIBE), bits(ACLOperation.WRITE, ACLOperation.DESCRIBE)),
               "Metadata's cluster and topic authorized operations")
            grant(b, binding(ACLOperation.WRITE, T, "pfx-", P))
            eq(produce(b, "pfx-a"), NONE, "Produce under the PREFIXED pfx-")
            eq(produce(b, "pfxa"), TOPIC_AUTH, "Produce to pfxa (not under pfx-)")
            eq(produce(b, "xpfx-a"), TOPIC_AUTH, "Produce to xpfx-a (not under pfx-)")
            eq(produce(b, "no-such-topic"), TOPIC_AUTH, "Produce to a missing topic without WRITE")

        def fetch_family():
            eq(metadata(b).get("acl-f"), None, "Metadata (all topics) hides acl-f without DESCRIBE")
            eq(metadata(b, ["acl-f"]), {"acl-f": TOPIC_AUTH}, "Metadata naming acl-f without DESCRIBE")
            eq(list_offsets(b, "acl-f"), TOPIC_AUTH, "ListOffsets without DESCRIBE")
            eq(fetch(b, "acl-f")[0], TOPIC_AUTH, "Fetch without READ")
            grant(b, binding(ACLOperation.WRITE, T, "acl-f"))
            eq(produce(b, "acl-f"), NONE, "Produce to acl-f with WRITE")
            eq(fetch(b, "acl-f")[0], TOPIC_AUTH, "Fetch with WRITE only")
            eq(list_offsets(b, "acl-f"), NONE, "ListOffsets with WRITE (implying DESCRIBE)")
            eq(metadata(b).get("acl-f"), NONE, "Metadata lists acl-f with DESCRIBE implied")
            grant(b, binding(ACLOperation.READ, T, "acl-f"))
            err, hw, records = fetch(b, "acl-f")
            eq((err, hw, len(records) > 0), (NONE, 1, True), "Fetch with READ")
            grant(b, binding(ACLOperation.READ, T, "acl-f", permission=D, host="127.0.0.1"))
            eq(fetch(b, "acl-f")[0], TOPIC_AUTH, "Fetch with a DENY READ from 127.0.0.1")
            revoke(b, binding(ACLOperation.READ, T, "acl-f", permission=D, host="127.0.0.1"))
            grant(b, binding(ACLOperation.READ, T, "acl-f", permission=D, host="10.9.9.9"))
            eq(fetch(b, "acl-f")[0], NONE, "Fetch with a DENY READ from another host only")

        def groups_family():
            eq(find_coordinator(b, "g1"), GROUP_AUTH, "FindCoordinator without DESCRIBE on the group")
            eq(offset_commit(b, "g1", "acl-f", 1), GROUP_AUTH, "OffsetCommit without READ on the group")
            eq(offset_fetch(b, "g1", "acl-f")[0], GROUP_AUTH, "OffsetFetch without DESCRIBE on the group")
            eq(describe_group(b, "g1"), GROUP_AUTH, "DescribeGroups without DESCRIBE")
            grant(b, binding(ACLOperation.READ, G, "g1"))
            eq(find_coordinator(b, "g1"), NONE, "FindCoordinator with READ (implying DESCRIBE)")
            eq(offset_commit(b, "g1", "acl-f", 1), NONE, "OffsetCommit with READ on group and topic")
            eq(offset_commit(b, "g1", "acl-t", 1), TOPIC_AUTH, "OffsetCommit on a topic without READ")
            eq(offset_fetch(b, "g1", "acl-f"), (NONE, NONE, 1), "OffsetFetch with DESCRIBE on both")
            eq(offset_fetch(b, "g1", "pfxa")[1], TOPIC_AUTH, "OffsetFetch of a topic without DESCRIBE")
            eq(describe_group(b, "g1"), NONE, "DescribeGroups with READ (implying DESCRIBE)")
            eq(describe_group(b, "g1", 3), (NONE, bits(ACLOperation.READ, ACLOperation.DESCRIBE)),
               "DescribeGroups v3's authorized operations with READ")
            eq(delete_group(b, "g1"), GROUP_AUTH, "DeleteGroups without DELETE")
            eq(group_call_errors(b, "g9"), dict.fromkeys(
                ["JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetDelete"], GROUP_AUTH),
               "the group APIs without READ (OffsetDelete: DELETE) on g9")
            # DESCRIBE on the cluster (implied by ALTER) lists every group;
            # without it, only the groups the principal may DESCRIBE.
            eq(list_groups(b), (NONE, ["g1", "unnamed"]), "ListGroups with DESCRIBE on the cluster")
            grant(b, binding(ACLOperation.DESCRIBE, C, "kafka-cluster", permission=D))
            eq(list_groups(b), (NONE, ["g1"]), "ListGroups without DESCRIBE on the cluster")
            revoke(b, binding(ACLOperation.DESCRIBE, C, "kafka-cluster", permission=D))
            grant(b, binding(ACLOperation.READ, G, "g", P, permission=D))
            eq(offset_commit(b, "g1", "acl-f", 2), GROUP_AUTH, "OffsetCommit with a PREFIXED DENY over the ALLOW")
            eq(describe_group(b, "g1"), NONE, "DescribeGroups (a DENY READ leaves the implied DESCRIBE)")
            revoke(b, binding(ACLOperation.READ, G, "g", P, permission=D))
            grant(b, binding(ACLOperation.DELETE, G, "g1"))
            eq(describe_group(b, "g1", 3), (NONE, bits(ACLOperation.READ, ACLOperation.DELETE, ACLOperation.DESCRIBE)),
               "DescribeGroups v3's authorized operations with READ and DELETE")
            eq(delete_group(b, "g1"), NONE, "DeleteGroups with DELETE")
            # A real consumer group, once READ is granted on group and topic.
            grant(b, binding(ACLOperation.READ, G, "readers"))
            with group_consumer(b, "readers", enable_auto_commit=False) as c:
                got = first_poll(c, lambda m: not m.error())
                assert got is not None, "the consumer group read nothing in %.0f s" % BOUND
                c.commit(message=got, asynchronous=False)
                eq(c.committed([TopicPartition("acl-f", 0)], timeout=BOUND)[0].offset, got.offset() + 1,
                   "the group's committed offset")
            # Without READ on the group, librdkafka reports Kafka's code.
            with group_consumer(b, "strangers") as c:
                m = first_poll(c, lambda m: m.error())
                eq(m and m.error().code(), KafkaError.GROUP_AUTHORIZATION_FAILED, "a consumer in a group without READ")

        def topic_admin():
            eq(create_topic(b, "new-a"), TOPIC_AUTH, "CreateTopics without CREATE")
            grant(b, binding(ACLOperation.CREATE, T, "new-", P))
            eq(create_topic(b, "new-a"), NONE, "CreateTopics under a PREFIXED CREATE")
            eq(create_topic(b, "newb"), TOPIC_AUTH, "CreateTopics outside the prefix")
            # v5+ describe the new topic only with DESCRIBE_CONFIGS on it.
            eq(create_topic_v5(b, "new-v5a"), (NONE, -1, -1, None, TOPIC_AUTH), "CreateTopics v5 without DESCRIBE_CONFIGS")
            grant(b, binding(ACLOperation.DESCRIBE_CONFIGS, T, "new-v5b"))
            err, partitions, rf, configs, config_error = create_topic_v5(b, "new-v5b")
            eq((err, partitions, rf, config_error, "retention.ms" in configs), (NONE, 1, 1, NONE, True),
               "CreateTopics v5 with DESCRIBE_CONFIGS")
            eq(create_partitions(b, "new-a", 2), TOPIC_AUTH, "CreatePartitions without ALTER")
            grant(b, binding(ACLOperation.ALTER, T, "new-a"))
            eq(create_partitions(b, "new-a", 2), NONE, "CreatePartitions with ALTER")
            eq(delete_records(b, "acl-f"), TOPIC_AUTH, "DeleteRecords without DELETE")
            grant(b, binding(ACLOperation.DELETE, T, "acl-f"))
            eq(delete_records(b, "acl-f"), NONE, "DeleteRecords with DELETE")
            eq(delete_topic(b, "new-a"), TOPIC_AUTH, "DeleteTopics without DELETE")
            grant(b, binding(ACLOperation.DELETE, T, "new-a"))
            eq(delete_topic(b, "new-a"), NONE, "DeleteTopics with DELETE")
            # Auto-creation needs DESCRIBE and CREATE.
            eq(metadata(b, ["auto-x"], auto_create=True), {"auto-x": TOPIC_AUTH}, "auto-create without DESCRIBE")
            grant(b, binding(ACLOperation.DESCRIBE, T, "auto-x"))
            eq(metadata(b, ["auto-x"], auto_create=True), {"auto-x": TOPIC_AUTH}, "auto-create without CREATE")
            eq(metadata(b, ["auto-y"]).get("auto-y"), TOPIC_AUTH, "Metadata of another topic")
            grant(b, binding(ACLOperation.CREATE, C, "kafka-cluster"))
            got = metadata(b, ["auto-x"], auto_create=True)["auto-x"]
            assert got in (NONE, 5), "auto-create with CREATE on the cluster: %r" % got  # 5: LEADER_NOT_AVAILABLE
            deadline = time.monotonic() + BOUND
            while metadata(b, ["auto-x"]).get("auto-x") != NONE:
                assert time.monotonic() < deadline, "auto-x never appeared"
                time.sleep(0.2)

        def configs():
            ca = confluent_admin(b)
            topic = ConfigResource("TOPIC", "acl-f")
            eq(config_error(ca.describe_configs([topic])[topic]), KafkaError.TOPIC_AUTHORIZATION_FAILED,
               "DescribeConfigs of a topic without DESCRIBE_CONFIGS")
            brk = ConfigResource("BROKER", "1")
            eq(config_error(ca.describe_configs([brk])[brk]), KafkaError.CLUSTER_AUTHORIZATION_FAILED,
               "DescribeConfigs of the broker without DESCRIBE_CONFIGS on the cluster")
            grant(b, binding(ACLOperation.ALTER_CONFIGS, T, "acl-f"))
            eq(config_error(ca.describe_configs([topic])[topic]), NONE, "DescribeConfigs with ALTER_CONFIGS (implying it)")
            altered = ConfigResource("TOPIC", "acl-f", set_config={"retention.ms": "86400000"})
            eq(config_error(ca.alter_configs([altered])[altered]), NONE, "AlterConfigs with ALTER_CONFIGS")
            grant(b, binding(ACLOperation.ALTER_CONFIGS, T, "acl-", P, permission=D))
            eq(config_error(ca.alter_configs([altered])[altered]), KafkaError.TOPIC_AUTHORIZATION_FAILED,
               "AlterConfigs with a PREFIXED DENY over the ALLOW")
            # A DENY ALTER_CONFIGS implies nothing: DESCRIBE_CONFIGS still allowed.
            eq(config_error(ca.describe_configs([topic])[topic]), NONE, "DescribeConfigs beside a DENY ALTER_CONFIGS")
            grant(b, binding(ACLOperation.DESCRIBE_CONFIGS, C, "kafka-cluster"))
            eq(config_error(ca.describe_configs([brk])[brk]), NONE, "DescribeConfigs of the broker with it")

        timed("ACL admin", acl_admin)
        timed("cluster APIs", cluster_apis)
        timed("produce", produce_family)
        timed("fetch", fetch_family)
        timed("groups and offsets", groups_family)
        timed("topic admin", topic_admin)
        timed("configs", configs)
        # Everything granted above survives a restart: spot-check one of each.
        b.restart()
        eq(produce(b, "pfx-a"), NONE, "Produce under pfx- after a restart")
        eq(produce(b, "pfxa"), TOPIC_AUTH, "pfxa still refused after a restart")
        eq(fetch(b, "acl-f")[0], NONE, "Fetch after a restart")
        # kafka-topics --list (Metadata) and --describe (then
        # DescribeTopicPartitions, and DescribeConfigs, which needs
        # DESCRIBE_CONFIGS) show exactly the topics the principal may DESCRIBE.
        describable = {"acl-t", "acl-f", "pfx-a", "auto-x"}
        eq(set(kafka_tool(TOPIC_COMMAND, b, "--list").split()), describable, "kafka-topics --list")
        grant(b, binding(ACLOperation.DESCRIBE_CONFIGS, T, "*"))
        described = set(re.findall(r"^Topic: (\S+)\s+TopicId", kafka_tool(TOPIC_COMMAND, b, "--describe"), re.M))
        eq(described, describable, "kafka-topics --describe")
        print("  steps: " + ", ".join("%s %.1f s" % kv for kv in step_times.items()), flush=True)


def test_ipv6_host():
    """An ACL's host is the client address as Kafka's Java code writes it:
    a client on ::1 is host 0:0:0:0:0:0:0:1 (kafka-acls --deny-host takes
    that form), not Boost's "::1"."""
    v6 = {"listeners": "PLAINTEXT://127.0.0.1:0,V6://[::1]:0",
          "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,V6:PLAINTEXT"}
    # No ACL at first, and allow.everyone.if.no.acl.found: the setup needs no super user (whom no DENY binds).
    open_until_acls = dict(AUTHORIZER, **{"allow.everyone.if.no.acl.found": "true"})
    with Runnel(overrides=dict(open_until_acls, **v6)) as b:
        port = int(re.search(r"listening on V6://\S+:(\d+)", b.log_text()).group(1))
        create_topic(b, "acl-v6")
        eq(produce(b, "acl-v6"), NONE, "Produce to acl-v6 with no ACLs")

        def fetch_v6():
            with w.Connection(port, timeout=BOUND, host="::1") as c:
                return w.parse_fetch_v4(c.call(w.fetch_v4(7, "acl-v6", 0, 0, max_wait_ms=100), 7))[("acl-v6", 0)][0]

        T, D = ResourceType.TOPIC, ACLPermissionType.DENY
        grant(b, binding(ACLOperation.READ, T, "acl-v6"))
        eq(fetch_v6(), NONE, "Fetch over ::1 with READ allowed from any host")
        grant(b, binding(ACLOperation.READ, T, "acl-v6", permission=D, host="0:0:0:0:0:0:0:1"))
        eq(fetch_v6(), TOPIC_AUTH, "Fetch over ::1 with a DENY READ from 0:0:0:0:0:0:0:1")
        eq(fetch(b, "acl-v6")[0], NONE, "Fetch over 127.0.0.1 beside it")


if __name__ == "__main__":
    runnel_binary()  # argv[1], checked before anything starts
    if len(sys.argv) > 2:
        JARS = sys.argv[2]
    sys.exit(run_tests([
        ("no authorizer: SECURITY_DISABLED", test_security_disabled),
        ("kafka-acls --add/--list/--remove across restarts", test_cli_round_trip),
        ("admin client ACL filters and validation", test_admin_client_filters),
        ("a deny test per API family", test_api_families),
        ("an IPv6 client's host as Kafka writes it", test_ipv6_host),
    ]))
