"""A three-node (or N-node) Apache Kafka 4.x cluster in KRaft mode, from the
Maven Central jars: the reference the cluster mode of the compatibility
matrix and bench/cluster_failover.py run the same code against.

  - KafkaNode: one combined broker+controller (process.roles=
    broker,controller) on two ports picked free by the kernel (kept across
    restarts), a fresh temporary log dir, started as kafka-server-start.sh
    does (kafka_harness.JVM_OPTS: -Xmx1G -Xms1G, G1); SIGKILLed by the kernel
    if the process that started it dies first (PR_SET_PDEATHSIG).
  - KafkaCluster: N nodes, node ids 1..N, a static controller.quorum.voters
    of all of them, each formatted with the same cluster id. start() returns
    once every node's Metadata lists every node (bounded). Nodes are named
    by id: kill9(i), start_broker(i), restart(i). `nodes` (also `brokers`,
    the name cluster_harness.Cluster uses) maps id -> KafkaNode.

Every process listens on 127.0.0.1 and is stopped by its pid.
"""

import os
import re
import signal
import subprocess
import time

import kafka_harness
import kafka_wire as kw
import runnel_harness
from cluster_harness import wait_until


class KafkaNode(runnel_harness.BrokerProcess):
    """One combined broker+controller of a KRaft cluster."""
    error = kafka_harness.KafkaError
    log_name = "kafka.log"
    stop_timeout = 60.0
    dump_limit = 20_000
    ready_poll = 0.2
    clean_exit_required = False  # the JVM exits 143 on SIGTERM

    def __init__(self, node_id, classpath, cluster_id, props, prefix="kafka-cluster-", ready_timeout=240.0):
        super().__init__(ready_timeout, False, "%s%d-" % (prefix, node_id))
        self.name = "kafka node %d" % node_id
        self.node_id = node_id
        self.classpath = classpath
        self.cluster_id = cluster_id
        self.props = props
        self.port = kafka_harness.free_port()
        self.controller_port = kafka_harness.free_port()
        self.props_path = os.path.join(self.tmp, "server.properties")
        self.log4j_path = os.path.join(self.tmp, "log4j2.yaml")
        self.formatted = False

    def java(self, main, *args):
        return ["java", *kafka_harness.JVM_OPTS, "-Dlog4j2.configurationFile=" + self.log4j_path,
                "-cp", self.classpath, main, *args]

    def write_config(self, voters):
        props = kafka_harness.node_properties(self.node_id, voters, self.port, self.controller_port, self.log_dir)
        props.update(self.props)
        with open(self.props_path, "w") as f:
            for k, v in props.items():
                f.write("%s=%s\n" % (k, v))
        with open(self.log4j_path, "w") as f:
            f.write(kafka_harness.LOG4J2)

    def launch(self):
        """Formats the storage on the first start, then starts the JVM (no wait)."""
        with open(self.log_path, "ab") as out:
            if not self.formatted:
                fmt = self.java("kafka.tools.StorageTool", "format", "--cluster-id=" + self.cluster_id,
                                "-c", self.props_path)
                if subprocess.run(fmt, stdin=subprocess.DEVNULL, stdout=out, stderr=out, timeout=120).returncode:
                    self._fail("kafka-storage format failed")
                self.formatted = True
            args = self.java("kafka.Kafka", self.props_path)
            out.write(b"=== kafka start: %s\n" % " ".join(args).encode())
            out.flush()
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                         preexec_fn=runnel_harness.set_parent_death_signal)

    def start(self):
        """launch(), then wait until this node answers Metadata with a broker listed."""
        self.launch()
        self._wait_for_metadata(time.monotonic() + self.ready_timeout)
        return self

    _ready = kafka_harness.Kafka._ready


class KafkaCluster:
    name = "kafka"
    label = "Kafka %s" % kafka_harness.KAFKA_VERSION

    def __init__(self, cache_dir=None, overrides=None, n=3, prefix="kafka-cluster-"):
        self.classpath = kafka_harness.kafka_classpath(cache_dir)
        cluster_id = kafka_harness.Kafka._cluster_id()
        self.ids = list(range(1, n + 1))
        self.nodes = {i: KafkaNode(i, self.classpath, cluster_id, dict(overrides or {}), prefix) for i in self.ids}
        self.brokers = self.nodes
        self.voters = ",".join("%d@127.0.0.1:%d" % (i, node.controller_port) for i, node in self.nodes.items())
        for node in self.nodes.values():
            node.write_config(self.voters)

    def start(self, timeout=240):
        for node in self.nodes.values():
            node.launch()
        self.wait_formed(timeout)
        return self

    def bootstrap(self, ids=None):
        return ",".join(self.nodes[i].bootstrap for i in (ids or self.ids))

    def live(self):
        return [i for i in self.ids if self.nodes[i].alive()]

    live_ids = live

    def metadata(self, node_id, topics=None):
        """node_id's Metadata v7 answer, parsed (kafka_wire.parse_metadata_v7)."""
        with kw.Connection(self.nodes[node_id].port, timeout=10) as c:
            return kw.parse_metadata_v7(c.call(kw.metadata_v7(7, topics), 7))

    def wait_formed(self, timeout=120):
        def formed():
            for i in self.live():
                if self.nodes[i].proc.poll() is not None:
                    raise RuntimeError("kafka node %d exited" % i)
                if sorted(self.metadata(i)["brokers"]) != self.ids:
                    return False
            return True
        wait_until(formed, timeout, "every Kafka node to list all %d brokers" % len(self.ids), poll=0.5)

    def controller(self):
        """The KRaft quorum leader (Metadata's controller id is a random broker in KRaft)."""
        live = self.live()
        cmd = ["java", "-Xmx256M", "-Dlog4j2.configurationFile=" + self.nodes[live[0]].log4j_path, "-cp",
               self.classpath, "org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-controller",
               ",".join("127.0.0.1:%d" % self.nodes[i].controller_port for i in live), "describe", "--status"]
        out = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=60).stdout.decode()
        m = re.search(r"LeaderId:\s+(\d+)", out)
        if not m:
            raise RuntimeError("kafka-metadata-quorum gave no leader: %s" % out[-2000:])
        return int(m.group(1))

    def kill9(self, i):
        self.nodes[i].kill9()

    def start_broker(self, i):
        """Starts a node that was killed (same dir, same ports) and waits until it answers Metadata."""
        return self.nodes[i].start()

    def restart(self, i):
        self.nodes[i].launch()
        self.wait_formed()

    def log_text(self):
        return "".join("===== %s =====\n%s" % (n.name, n.log_text()[-6000:]) for n in self.nodes.values())

    def _dump(self):
        for n in self.nodes.values():
            n._dump()

    def close(self, timeout=20):
        stop_all(self.nodes.values(), timeout)
        for n in self.nodes.values():
            n.close()


def stop_all(nodes, timeout):
    """SIGTERM to every live node by pid, then SIGKILL whatever is left after
    `timeout` (the last voters of a quorum cannot finish a controlled shutdown)."""
    procs = [n.proc for n in nodes if n.proc is not None and n.proc.poll() is None]
    for p in procs:
        os.kill(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
    for n in nodes:
        n.proc = None
