"""What the brokers of a three-broker Runnel cluster tell clients about the
cluster (label "cluster"), on one cluster with 30000 ms sessions, so that a
killed broker stays registered for a while, as a killed Kafka broker stays
unfenced until its session ends:

  - the admin requests Runnel serves, sent raw to the brokers that are not
    the controller elected in etcd (clients send them to whichever broker
    Metadata names as controller): CreateTopics, CreatePartitions,
    IncrementalAlterConfigs and AlterConfigs of a topic and of the
    cluster-wide broker configs (each seen from another broker),
    ElectLeaders, ListPartitionReassignments and DeleteTopics are served
    there, none refused as NOT_CONTROLLER (Kafka's brokers forward them to
    the controller); AlterPartitionReassignments below too;
  - DescribeLogDirs (raw v1 and v4) of each broker lists exactly the
    partitions its Metadata's replica lists give it (topics of replication
    factor 2 and 3), each partition's size the sum of its .log files, the
    same on every replica and grown after producing, offset lag 0 (Kafka's:
    the replica's own high watermark minus its log end offset, floored at
    0) and no future replica, as Kafka's kafka-log-dirs --describe prints
    them too; a replica moved away by AlterPartitionReassignments and a
    deleted topic leave the lists;
  - every broker's Metadata and DescribeCluster name a live broker as
    controller (itself); after a SIGKILL of etcd's controller, while it is
    still registered, the survivors' never name it, and a librdkafka
    AdminClient created and sent create_topics right after the kill
    completes well within its request timeout (it sends to the controller
    Metadata names, and waited a whole session when that was etcd's).

  /usr/bin/python3 compat-tests/cluster_describe_test.py build/debug/runnel <kafka jar cache dir>
"""

import json
import os
import subprocess
import sys
import threading
import time

import admin_test as at
import kafka_wire as kw
from cluster_admin_test import ELECTION_NOT_NEEDED, elect_leaders_v1, parse_elect_leaders_v1
from cluster_harness import (NONE, Cluster, partition_dir, produce, records_for, run_tests, runnel_binary,
                             seed_assignment, wait_until)
from cluster_reassignment_test import alter, listed
from kafka_harness import kafka_classpath

IDS = [1, 2, 3]
BOUND = 30.0  # seconds: CI machines are loaded
SESSION_MS = 30000
ADMIN_TIMEOUT = 20.0  # the AdminClient's request timeout after the kill, inside the session
ADMIN_WITHIN = 10.0  # ... and how soon it must have succeeded
NAMED_FOR = 5.0  # seconds after the kill of asking the survivors who the controller is
LOG_DIRS_COMMAND = "org.apache.kafka.tools.LogDirsCommand"
TOPIC, BROKER = 2, 4  # ConfigResource types
PREFERRED = 0

# The requests admin_test's codec does not know yet: (name, flexible from, request, response).
at.APIS.setdefault(20, ("DeleteTopics", 4,
                        [("topic_names", ("arr", "str"), 0), ("timeout_ms", "i32", 0)],
                        [("throttle_time_ms", "i32", 1),
                         ("responses", ("arr", [("name", "str", 0), ("error_code", "i16", 0)]), 0)]))


def others(c):
    """The brokers etcd did not elect, which clients used to be kept from."""
    elected = c.etcd_controller()
    assert elected in IDS, "etcd's controller key holds %s" % elected
    return [i for i in IDS if i != elected], elected


def topic_config(c, node_id, topic, key):
    r = at.Raw(c.port(node_id)).call(32, 1, {"resources": [{"resource_type": TOPIC, "resource_name": topic,
                                                             "configuration_keys": [key]}],
                                              "include_synonyms": False})
    res = r["results"][0]
    assert res["error_code"] == NONE, "DescribeConfigs %s on node %d: %s" % (topic, node_id, res)
    return {e["name"]: e["value"] for e in res["configs"]}.get(key)


def cluster_defaults(c, node_id):
    """The cluster-wide dynamic broker configs (BROKER "") node_id lists."""
    r = at.Raw(c.port(node_id)).call(32, 1, {"resources": [{"resource_type": BROKER, "resource_name": "",
                                                             "configuration_keys": None}],
                                              "include_synonyms": False})
    res = r["results"][0]
    assert res["error_code"] == NONE, "DescribeConfigs BROKER \"\" on node %d: %s" % (node_id, res)
    return {e["name"]: e["value"] for e in res["configs"]}


def wait_config(c, node_id, topic, key, value):
    wait_until(lambda: topic_config(c, node_id, topic, key) == value, BOUND,
               "node %d to show %s=%s on %s" % (node_id, key, value, topic))


def admin_on_any_broker(c):
    (x, y), elected = others(c)
    topic = "any-broker"
    res = c.create_topics_raw(x, [(topic, 2, 3)])
    assert res[topic][0] == NONE, "CreateTopics via node %d: %s" % (x, res)
    c.wait_assignment(topic, seed_assignment(IDS, 2, 3), BOUND)

    grown = kw.parse_create_partitions_v1(c.call(y, lambda corr: kw.create_partitions_v1(corr, [(topic, 4)])))
    assert [(n, e) for n, e, _ in grown] == [(topic, NONE)], "CreatePartitions via node %d: %s" % (y, grown)
    c.wait_assignment(topic, seed_assignment(IDS, 4, 3), BOUND)

    r = at.Raw(c.port(x)).call(44, 0, {"resources": [{"resource_type": TOPIC, "resource_name": topic, "configs": [
        {"name": "retention.ms", "config_operation": 0, "value": "3600000"}]}], "validate_only": False})
    assert [e["error_code"] for e in r["responses"]] == [NONE], "IncrementalAlterConfigs via node %d: %s" % (x, r)
    wait_config(c, elected, topic, "retention.ms", "3600000")

    r = at.Raw(c.port(y)).call(33, 1, {"resources": [{"resource_type": TOPIC, "resource_name": topic, "configs": [
        {"name": "retention.ms", "value": "7200000"}]}], "validate_only": False})
    assert [e["error_code"] for e in r["responses"]] == [NONE], "AlterConfigs via node %d: %s" % (y, r)
    wait_config(c, x, topic, "retention.ms", "7200000")

    # A cluster-wide dynamic broker config, set on one broker, seen from etcd's
    # controller, cleared (AlterConfigs replaces the layer) on the other.
    r = at.Raw(c.port(y)).call(44, 0, {"resources": [{"resource_type": BROKER, "resource_name": "", "configs": [
        {"name": "log.retention.ms", "config_operation": 0, "value": "7200000"}]}], "validate_only": False})
    assert [e["error_code"] for e in r["responses"]] == [NONE], "IncrementalAlterConfigs BROKER via node %d: %s" % (y, r)
    wait_until(lambda: cluster_defaults(c, elected) == {"log.retention.ms": "7200000"}, BOUND,
               "node %d to list the cluster-wide default" % elected)
    r = at.Raw(c.port(x)).call(33, 1, {"resources": [{"resource_type": BROKER, "resource_name": "", "configs": []}],
                                       "validate_only": False})
    assert [e["error_code"] for e in r["responses"]] == [NONE], "AlterConfigs BROKER via node %d: %s" % (x, r)
    wait_until(lambda: cluster_defaults(c, y) == {}, BOUND, "node %d to list no cluster-wide default" % y)

    # Every partition is led by its preferred replica already: served, nothing to elect.
    top, results = parse_elect_leaders_v1(c.call(x, lambda corr: elect_leaders_v1(corr, PREFERRED, [(topic, range(4))])))
    assert top == NONE and results == {(topic, p): ELECTION_NOT_NEEDED for p in range(4)}, (
        "ElectLeaders via node %d: %s %s" % (x, top, results))

    assert listed(c.port(y)) == {}, "ListPartitionReassignments via node %d" % y

    r = at.Raw(c.port(y)).call(20, 1, {"topic_names": [topic], "timeout_ms": 20000})
    assert r["responses"] == [{"name": topic, "error_code": NONE}], "DeleteTopics via node %d: %s" % (y, r)
    wait_until(lambda: all(topic not in c.metadata(i)["topics"] for i in IDS), BOUND,
               "%s gone from every broker's Metadata" % topic)
    print("     served by nodes %d and %d, etcd's controller node %d" % (x, y, elected), flush=True)


# -- DescribeLogDirs ------------------------------------------------------------------------------


def log_dirs(c, node_id, version=4, topics=None):
    """node_id's DescribeLogDirs: {(topic, p): (size, offset_lag, is_future)}; asserts its one log dir, no error."""
    r = at.Raw(c.port(node_id)).call(35, version, {"topics": topics})
    if version >= 3:
        assert r["error_code"] == NONE, "node %d: DescribeLogDirs error %d" % (node_id, r["error_code"])
    assert len(r["results"]) == 1, "node %d: %d log dirs" % (node_id, len(r["results"]))
    d = r["results"][0]
    assert d["error_code"] == NONE, "node %d: log dir error %d" % (node_id, d["error_code"])
    assert os.path.realpath(d["log_dir"]) == os.path.realpath(c.brokers[node_id].log_dir), (
        "node %d: log dir %s" % (node_id, d["log_dir"]))
    if version >= 4:
        assert 0 <= d["usable_bytes"] <= d["total_bytes"], "node %d: space %s" % (node_id, d)
    return {(t["name"], p["partition_index"]): (p["partition_size"], p["offset_lag"], p["is_future_key"])
            for t in d["topics"] for p in t["partitions"]}


def hosted(c, node_id):
    """The partitions node_id's Metadata lists it a replica of."""
    return {(name, p) for name, t in c.metadata(node_id)["topics"].items()
            for p, v in t["partitions"].items() if node_id in v["replicas"]}


def log_bytes(c, node_id, topic, p):
    d = partition_dir(c, node_id, topic, p)
    return sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d) if n.endswith(".log"))


def wait_log_dirs(c, what):
    """Every broker's DescribeLogDirs lists exactly what its Metadata says
    it hosts, each size its .log files' and every replica's the same, no
    lag, no future replica; -> {node: {(topic, p): size}}."""
    def agreed():
        sizes = {}
        for i in IDS:
            got, want = log_dirs(c, i), hosted(c, i)
            assert set(got) == want, "node %d lists %s, hosts %s" % (i, sorted(got), sorted(want))
            for (t, p), (size, lag, future) in got.items():
                assert (lag, future) == (0, False), "node %d: %s-%d offset lag %d, future %s" % (i, t, p, lag, future)
                assert size == log_bytes(c, i, t, p), "node %d: %s-%d size %d, its .log files %d bytes" % (
                    i, t, p, size, log_bytes(c, i, t, p))
            sizes[i] = {k: v[0] for k, v in got.items()}
        by_partition = {}
        for i, s in sizes.items():
            for k, size in s.items():
                by_partition.setdefault(k, {})[i] = size
        differ = {k: v for k, v in by_partition.items() if len(set(v.values())) != 1}
        assert not differ, "replicas' sizes differ: %s" % differ
        return sizes
    return wait_until(agreed, BOUND, what)


def kafka_log_dirs(classpath, c, topics):
    """kafka-log-dirs --describe's JSON: {node: {(topic, p): (size, offsetLag, isFuture)}}."""
    cmd = ["java", "-Dlog4j2.level=ERROR", "-cp", classpath, LOG_DIRS_COMMAND, "--bootstrap-server", c.bootstrap(),
           "--describe", "--topic-list", ",".join(topics)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, "kafka-log-dirs exited %d:\n%s%s" % (out.returncode, out.stdout, out.stderr)
    doc = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("{")))
    listed_ = {}
    for b in doc["brokers"]:
        assert len(b["logDirs"]) == 1 and b["logDirs"][0]["error"] is None, "broker %d: %s" % (b["broker"], b)
        rows = listed_[b["broker"]] = {}
        for part in b["logDirs"][0]["partitions"]:
            name, _, p = part["partition"].rpartition("-")
            rows[(name, int(p))] = (part["size"], part["offsetLag"], part["isFuture"])
    return listed_


def describe_log_dirs(classpath, c):
    (x, y), _ = others(c)
    topics = {"dirs-rf2": (3, 2), "dirs-rf3": (2, 3)}
    for name, (partitions, rf) in topics.items():
        res = c.create_topics_raw(x, [(name, partitions, rf)])
        assert res[name][0] == NONE, "CreateTopics %s: %s" % (name, res)
        c.wait_assignment(name, seed_assignment(IDS, partitions, rf), BOUND)
    empty = wait_log_dirs(c, "every broker's log dirs to list the new partitions")
    for i in IDS:
        mine = {k: v for k, v in empty[i].items() if k[0] in topics}
        assert mine and set(mine.values()) == {0}, "node %d: new partitions' sizes %s" % (i, mine)
        # Asked for partitions by name: only those it hosts (v1, the oldest Kafka 4.x serves).
        asked = [{"topic": "dirs-rf2", "partitions": [0, 1, 2, 7]}]
        want = {k: (0, 0, False) for k in empty[i] if k[0] == "dirs-rf2"}
        assert log_dirs(c, i, 1, asked) == want, "node %d: asked for dirs-rf2 0-2 and 7: %s, want %s" % (
            i, log_dirs(c, i, 1, asked), want)

    for name, (partitions, _) in topics.items():
        produce(c.bootstrap(), name, [r for p in range(partitions) for r in records_for(p, 40, name.encode())])
    grown = wait_log_dirs(c, "every replica's size to settle after producing")
    for i in IDS:
        for k, size in grown[i].items():
            if k[0] in topics:
                assert size > 0, "node %d: %s-%d size %d after producing" % (i, k[0], k[1], size)
    tool = kafka_log_dirs(classpath, c, sorted(topics))
    want = {i: {k: (size, 0, False) for k, size in grown[i].items() if k[0] in topics} for i in IDS}
    assert tool == want, "kafka-log-dirs --describe: %s, want %s" % (tool, want)
    print("     sizes %s on node 1, as kafka-log-dirs prints" % sorted(want[1].items()), flush=True)

    # dirs-rf2-0 from [1, 2] to [2, 3], asked of a broker that is not etcd's controller.
    moved = ("dirs-rf2", 0)
    top, results = alter(c.port(y), {moved: [2, 3]})
    assert top == NONE and results[moved][0] == NONE, "AlterPartitionReassignments via node %d: %s %s" % (
        y, top, results)

    def done():
        assert listed(c.port(x)) == {}, "a reassignment still listed by node %d" % x
        return all(c.partitions(i, moved[0])[moved[1]]["replicas"] == [2, 3] for i in IDS)
    wait_until(done, BOUND, "%s-%d moved to [2, 3]" % moved)
    after = wait_log_dirs(c, "the moved replica gone from node 1's log dirs, on node 3's")
    assert moved not in after[1] and after[3][moved] == after[2][moved] == grown[1][moved], (
        "after the move: node 1 %s, node 2 %s, node 3 %s, before %s" % (
            after[1].get(moved), after[2].get(moved), after[3].get(moved), grown[1][moved]))

    r = at.Raw(c.port(x)).call(20, 1, {"topic_names": ["dirs-rf3"], "timeout_ms": 20000})
    assert r["responses"] == [{"name": "dirs-rf3", "error_code": NONE}], "DeleteTopics via node %d: %s" % (x, r)
    gone = wait_log_dirs(c, "dirs-rf3 gone from every broker's log dirs")
    for i in IDS:
        assert not any(k[0] == "dirs-rf3" for k in gone[i]), "node %d still lists dirs-rf3: %s" % (i, gone[i])


# -- the controller id ----------------------------------------------------------------------------


def named(c, node_id):
    """(Metadata's controller id, DescribeCluster's) from node_id."""
    d = kw.parse_describe_cluster_v0(c.call(node_id, kw.describe_cluster_v0))
    assert d["error"] == NONE, "node %d: DescribeCluster error %d" % (node_id, d["error"])
    return c.metadata(node_id)["controller_id"], d["controller_id"]


def controller_killed(c):
    survivors, elected = others(c)
    for i in IDS:
        # Kafka's rule is a live broker; Runnel's pick, the answering one.
        assert named(c, i) == (i, i), "node %d names %s as controller" % (i, named(c, i))
    from confluent_kafka.admin import AdminClient, NewTopic
    outcome = {}

    def create():
        # Bootstrapped on all three, the killed one too, as a client configured before the kill is.
        client = AdminClient({"bootstrap.servers": c.bootstrap(IDS), "socket.timeout.ms": 10000})
        try:
            futures = client.create_topics([NewTopic("after-kill", 2, 2)], operation_timeout=ADMIN_TIMEOUT / 2,
                                           request_timeout=ADMIN_TIMEOUT)
            futures["after-kill"].result(ADMIN_TIMEOUT + 10)
            outcome["ok"] = time.monotonic() - killed
        except Exception as e:
            outcome["error"] = "%s after %.1f s" % (e, time.monotonic() - killed)

    c.kill9(elected)
    killed = time.monotonic()
    admin = threading.Thread(target=create)
    admin.start()
    polls = 0
    while time.monotonic() - killed < NAMED_FOR:
        for i in survivors:
            got = named(c, i)
            assert set(got) <= set(survivors), "%.1f s after node %d was killed, node %d names %s" % (
                time.monotonic() - killed, elected, i, got)
        polls += 1
        time.sleep(0.02)
    admin.join(ADMIN_TIMEOUT + 20)
    assert not admin.is_alive(), "create_topics has not returned"
    assert "ok" in outcome, "create_topics right after the kill: %s" % outcome.get("error")
    assert outcome["ok"] < ADMIN_WITHIN, "create_topics took %.1f s (request timeout %.0f s)" % (
        outcome["ok"], ADMIN_TIMEOUT)
    # All of it inside the killed broker's session: it was still registered.
    for i in survivors:
        assert elected in c.metadata(i)["brokers"], "node %d no longer lists node %d" % (i, elected)
    print("     %d rounds of Metadata and DescribeCluster from nodes %s in %.0f s named survivors only; "
          "create_topics OK %.2f s after node %d was killed" % (polls, survivors, NAMED_FOR, outcome["ok"], elected),
          flush=True)


def main():
    binary = runnel_binary()
    classpath = kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None)
    # No controlled shutdown at the end: with etcd's controller killed and
    # still elected for a session, the survivors would wait for it to move
    # their leaderships (controlled.shutdown.* bounds) before stopping.
    overrides = {"log.segment.delete.delay.ms": "500", "controlled.shutdown.enable": "false"}
    with Cluster(3, binary, overrides=overrides, session_timeout_ms=SESSION_MS, heartbeat_interval_ms=1000) as c:
        return run_tests([
            ("admin requests to brokers that are not etcd's controller", lambda: admin_on_any_broker(c)),
            ("DescribeLogDirs of each broker: its replicas, their sizes; kafka-log-dirs; moved, deleted",
             lambda: describe_log_dirs(classpath, c)),
            ("SIGKILL of etcd's controller: survivors never name it; AdminClient create_topics at once",
             lambda: controller_killed(c)),
        ], c)


if __name__ == "__main__":
    sys.exit(main())
