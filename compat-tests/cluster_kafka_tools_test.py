"""Kafka 4.1.1's own kafka-topics (org.apache.kafka.tools.TopicCommand) and
kafka-cluster (org.apache.kafka.tools.ClusterTool) against a three-broker
Runnel cluster (label "cluster"), one cluster for all steps (30000 ms
sessions, replica.lag.time.max.ms 3000, so a paused broker leaves ISRs by
the lag rule and stays registered; log.segment.delete.delay.ms 500):

  - --create with --replication-factor 1, 2 and 3 and several partitions,
    and one with --replica-assignment; --describe prints each partition's
    Leader, Replicas and Isr, which equal the seed placement rule (or the
    explicit assignment) and every broker's Metadata;
  - --alter --partitions grows a topic, the new partitions placed by the
    same rule; --delete removes one from every broker's Metadata and its
    partition dirs (renamed "-delete", then removed) from every broker's log dir;
  - --describe --under-replicated-partitions lists the partitions a
    SIGSTOPped follower is out of the ISR of once replica.lag.time.max.ms
    has passed, and nothing once it is back in sync after SIGCONT;
  - DescribeCluster (raw v0, from every broker) names a live broker as
    controller, as Kafka's brokers do (the answering one), not the one
    etcd's controller key holds; kafka-cluster list-endpoints lists the
    three brokers.

  /usr/bin/python3 compat-tests/cluster_kafka_tools_test.py build/debug/runnel <kafka jar cache dir>
"""

import os
import re
import subprocess
import sys
import time

import kafka_wire as kw
from cluster_harness import Cluster, run_tests, runnel_binary, seed_assignment, wait_until
from kafka_harness import kafka_classpath
from topic_checks import partition_rows

IDS = [1, 2, 3]
BOUND = 30.0  # seconds: CI machines are loaded
LAG_MS = 3000
SESSION_MS = 30000  # far longer than a describe around a paused broker takes
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
CLUSTER_TOOL = "org.apache.kafka.tools.ClusterTool"
# --create: name -> (partitions, replication factor)
CREATED = {"tools-rf1": (4, 1), "tools-rf2": (5, 2), "tools-rf3": (3, 3)}
ASSIGNED = ("tools-assigned", {0: [3, 1], 1: [2, 3], 2: [1, 2]})


class Tools:
    def __init__(self, classpath, cluster):
        self.classpath = classpath
        self.c = cluster

    def run(self, main, *args):
        cmd = ["java", "-Dlog4j2.level=ERROR", "-cp", self.classpath, main, *args]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, "%s %s exited %d:\n%s%s" % (main.rsplit(".", 1)[1], " ".join(args),
                                                                 out.returncode, out.stdout, out.stderr)
        return out.stdout

    def admin_config(self):
        # The admin client may pick a SIGSTOPped broker it learnt of from
        # Metadata (which accepts the connection and never answers): a short
        # request timeout moves the call on to another broker well within
        # the paused broker's session.
        path = os.path.join(self.c.etcd.tmp, "admin.properties")
        with open(path, "w") as f:
            f.write("request.timeout.ms=4000\ndefault.api.timeout.ms=90000\n")
        return path

    def topics(self, *args):
        # Bootstrapped from the brokers running.
        return self.run(TOPIC_COMMAND, "--bootstrap-server", self.c.bootstrap(), "--command-config",
                        self.admin_config(), *args)

    def cluster(self, command):
        return self.run(CLUSTER_TOOL, command, "--bootstrap-server", self.c.bootstrap(), "--config",
                        self.admin_config())

    def describe(self, *args):
        """{(topic, partition): (leader, replicas, isr)} of --describe's rows."""
        text = self.topics("--describe", "--exclude-internal", *args)
        return {key: (-1 if leader == "none" else int(leader), ints(replicas), ints(isr))
                for key, (leader, replicas, isr, _) in partition_rows(text).items()}


def ints(text):
    return [int(x) for x in text.split(",") if x]


def metadata_rows(c, node_id, topics):
    """node_id's Metadata for `topics` in --describe's shape."""
    md = c.metadata(node_id, topics)
    rows = {}
    for name in topics:
        t = md["topics"][name]
        assert t["error"] == 0, "node %d: %s error %d" % (node_id, name, t["error"])
        for p, v in t["partitions"].items():
            rows[(name, p)] = (v["leader"], v["replicas"], v["isr"])
    return rows


def wait_described(tools, c, expected):
    """--describe of `expected`'s topics equals `expected` ({topic: {p: replicas}},
    leaders the first replica, ISRs all replicas) and every broker's
    Metadata; returns the rows."""
    want = {(t, p): (r[0], r, r) for t, parts in expected.items() for p, r in parts.items()}
    topics = sorted(expected)

    def agreed():
        for i in IDS:
            got = metadata_rows(c, i, topics)
            assert got == want, "node %d's Metadata: %s, want %s" % (i, got, want)
        return True
    wait_until(agreed, BOUND, "every broker's Metadata to show %s" % topics)
    rows = {k: v for k, v in tools.describe().items() if k[0] in expected}
    assert rows == want, "kafka-topics --describe: %s, want %s" % (rows, want)
    return rows


def partition_dirs(c, topic):
    """Every broker's dirs of `topic`'s partitions (also renamed for deletion)."""
    pattern = re.compile(r"^%s-\d+($|\.)" % re.escape(topic))
    return {i: sorted(d for d in os.listdir(c.brokers[i].log_dir) if pattern.match(d)) for i in IDS}


def create_describe_alter_delete(tools, c):
    for name, (partitions, rf) in CREATED.items():
        tools.topics("--create", "--topic", name, "--partitions", str(partitions), "--replication-factor", str(rf))
    name, assignment = ASSIGNED
    tools.topics("--create", "--topic", name, "--replica-assignment",
                 ",".join(":".join(map(str, assignment[p])) for p in sorted(assignment)))
    expected = {n: seed_assignment(IDS, p, rf) for n, (p, rf) in CREATED.items()}
    expected[name] = assignment
    rows = wait_described(tools, c, expected)
    print("     kafka-topics --describe: %d partitions of %d topics as placed and as every broker's Metadata says"
          % (len(rows), len(expected)), flush=True)

    # Growing rf2 from 5 to 8 partitions: the new ones continue the rule.
    tools.topics("--alter", "--topic", "tools-rf2", "--partitions", "8")
    expected["tools-rf2"] = seed_assignment(IDS, 8, 2)
    wait_described(tools, c, {"tools-rf2": expected["tools-rf2"]})

    victim = "tools-rf3"
    assert all(partition_dirs(c, victim)[i] for i in IDS), "not every broker has %s's dirs: %s" % (
        victim, partition_dirs(c, victim))
    tools.topics("--delete", "--topic", victim)

    def deleted():
        for i in IDS:
            assert victim not in c.metadata(i)["topics"], "node %d still lists %s" % (i, victim)
        dirs = partition_dirs(c, victim)
        assert not any(dirs.values()), "partition dirs left: %s" % dirs
        return True
    wait_until(deleted, BOUND, "%s gone from every broker's Metadata and log dir" % victim)
    listed = tools.topics("--list", "--exclude-internal").split()
    assert victim not in listed and set(listed) == set(expected) - {victim}, "kafka-topics --list: %s" % listed


def under_replicated(tools, c):
    controller = c.etcd_controller()
    paused = next(i for i in reversed(IDS) if i != controller)
    # The partitions it follows: their leaders drop it by the lag rule.
    # (Those it leads keep their ISR: nobody else can change it before its session ends.)
    topics = ["tools-rf1", "tools-rf2", ASSIGNED[0]]
    before = metadata_rows(c, controller, topics)
    followed = sorted(k for k, (leader, replicas, _) in before.items() if paused in replicas and leader != paused)
    assert followed, "node %d follows nothing: %s" % (paused, before)
    started = time.monotonic()
    c.sigstop(paused)
    try:
        def shrunk():
            now = metadata_rows(c, controller, topics)
            short = sorted(k for k, (_, replicas, isr) in now.items() if len(isr) < len(replicas))
            assert short == followed, "under-replicated in Metadata: %s, want %s" % (short, followed)
            return now
        now = wait_until(shrunk, LAG_MS / 1000 * 1.5 + BOUND, "node %d out of the ISRs it follows" % paused)
        elapsed = time.monotonic() - started
        rows = tools.describe("--under-replicated-partitions")
        want = {k: now[k] for k in followed}
        assert rows == want, "--under-replicated-partitions: %s, want %s" % (rows, want)
        md = c.metadata(controller)
        assert paused in md["brokers"], "node %d lost its registration (session %d ms) while paused" % (
            paused, SESSION_MS)
        print("     %d partitions under-replicated %.1f s after SIGSTOP of node %d (lag %d ms)" % (
            len(rows), elapsed, paused, LAG_MS), flush=True)
    finally:
        c.sigcont(paused)

    def in_sync():
        for i in IDS:
            for k, (_, replicas, isr) in metadata_rows(c, i, topics).items():
                assert sorted(isr) == sorted(replicas), "node %d: %s-%d isr %s" % (i, k[0], k[1], isr)
        return True
    wait_until(in_sync, BOUND, "node %d back in every ISR" % paused)
    rows = tools.describe("--under-replicated-partitions")
    assert rows == {}, "--under-replicated-partitions after SIGCONT: %s" % rows


def cluster_controller(tools, c):
    c.wait_formed(BOUND, "the three brokers registered")
    holder = c.etcd_controller()
    assert holder in IDS, "etcd's controller key holds %s" % holder
    for i in IDS:
        d = kw.parse_describe_cluster_v0(c.call(i, kw.describe_cluster_v0))
        assert d["error"] == 0, "node %d: DescribeCluster error %d" % (i, d["error"])
        # Kafka's rule: a live broker (KRaft's brokers never name the active
        # controller); Runnel's: the answering broker, which the client reached.
        assert d["controller_id"] == i, "node %d's DescribeCluster names controller %d" % (i, d["controller_id"])
        assert sorted(d["brokers"]) == IDS, "node %d's DescribeCluster lists %s" % (i, sorted(d["brokers"]))
        assert d["brokers"][i][1] == c.port(i), "node %d listed at %s" % (i, d["brokers"][i])
    out = tools.cluster("list-endpoints")
    # One row per broker: ID, HOST, PORT, RACK, STATE, ENDPOINT_TYPE.
    listed = {int(line.split()[0]): int(line.split()[2]) for line in out.splitlines()[1:] if line.strip()}
    assert listed == {i: c.port(i) for i in IDS}, "kafka-cluster list-endpoints:\n%s" % out
    print("     every broker's DescribeCluster names itself; etcd's controller is node %d" % holder, flush=True)


def main():
    binary = runnel_binary()
    classpath = kafka_classpath(sys.argv[2] if len(sys.argv) > 2 else None)
    # log.segment.delete.delay.ms (file.delete.delay.ms): a deleted partition's "-delete" dir goes within a second.
    overrides = {"replica.lag.time.max.ms": str(LAG_MS), "log.segment.delete.delay.ms": "500"}
    with Cluster(3, binary, overrides=overrides, session_timeout_ms=SESSION_MS,
                 heartbeat_interval_ms=1000) as c:
        tools = Tools(classpath, c)
        code = run_tests([
            ("kafka-topics --create rf 1-3 and --replica-assignment, --describe, --alter, --delete",
             lambda: create_describe_alter_delete(tools, c)),
            ("kafka-topics --describe --under-replicated-partitions around a SIGSTOPped follower",
             lambda: under_replicated(tools, c)),
            ("DescribeCluster names a live broker, not etcd's controller; kafka-cluster list-endpoints",
             lambda: cluster_controller(tools, c)),
        ])
        if code:
            c._dump()
        return code


if __name__ == "__main__":
    sys.exit(main())
