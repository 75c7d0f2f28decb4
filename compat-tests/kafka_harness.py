"""Starts and stops Apache Kafka 4.x, single node in KRaft mode, from the
Maven Central jars: the reference broker the compatibility matrix and the
benchmarks run the same code against.

Same contract as runnel_harness.Runnel:
  - listens on 127.0.0.1 (broker and controller ports picked free by the
    kernel just before start) with a fresh temporary log dir;
  - start() formats the storage (kafka-storage.sh format) and starts the
    server the way kafka-server-start.sh does (-Xmx1G -Xms1G and
    kafka-run-class.sh's G1 options), then returns once a Metadata request
    lists the broker (bounded wait);
  - stop() sends SIGTERM to the pid and waits (bounded), then SIGKILL;
    kill9() is the crash; restart() starts again on the same dir and ports;
  - stdout/stderr go to <tmp>/kafka.log, printed when a test fails inside
    `with Kafka(...)`.

The configuration is Kafka's shipped config/server.properties for a
combined broker+controller node, which is Kafka's defaults plus the
replication factors of 1 a single node needs (with the default of 3 the
__consumer_offsets topic could never be created), and the caller's overrides.

The jars come from storage/interop/kafka_jars.sh (Maven, cached): the cache
dir is the `cache_dir` argument, else $RUNNEL_KAFKA_CACHE, else
<repo>/build/kafka-jars.
"""

import os
import socket
import struct
import subprocess
import time
import uuid

import runnel_harness

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KAFKA_JARS = os.path.join(REPO, "storage", "interop", "kafka_jars.sh")
KAFKA_VERSION = os.environ.get("KAFKA_VERSION", "4.1.1")

# kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS and kafka-server-start.sh's heap.
JVM_OPTS = [
    "-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
]

LOG4J2 = """\
Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
"""


def kafka_classpath(cache_dir=None):
    """Fetches Kafka's jars once (Maven) and returns the java -cp value."""
    cache = cache_dir or os.environ.get("RUNNEL_KAFKA_CACHE") or os.path.join(REPO, "build", "kafka-jars")
    os.makedirs(cache, exist_ok=True)
    out = subprocess.run(["bash", KAFKA_JARS, cache], check=True, stdout=subprocess.PIPE,
                         env=dict(os.environ, KAFKA_VERSION=KAFKA_VERSION), timeout=1800)
    return out.stdout.decode().strip()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KafkaError(RuntimeError):
    pass


def node_properties(node_id, voters, port, controller_port, log_dir):
    """A combined broker+controller KRaft node on 127.0.0.1: `port` for
    clients, `controller_port` for the quorum (`voters`: id@host:port,...)."""
    return {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        "controller.quorum.voters": voters,
        "listeners": "PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (port, controller_port),
        "advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % port,
        "inter.broker.listener.name": "PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": log_dir,
        "num.partitions": "1",
    }


class Kafka(runnel_harness.BrokerProcess):
    name = "kafka"
    error = KafkaError
    log_name = "kafka.log"
    stop_timeout = 60.0  # kafka-server-stop.sh's SIGTERM; the JVM's shutdown takes longer
    dump_limit = 100_000
    ready_poll = 0.2
    clean_exit_required = False  # the JVM exits 143 on SIGTERM

    def __init__(self, cache_dir=None, overrides=None, keep_dir=False, ready_timeout=240.0,
                 jvm_opts=None, listeners=(), features=None):
        self.classpath = kafka_classpath(cache_dir)
        # Feature levels finalized at format time (kafka-storage format
        # --feature name=level, KIP-1022), e.g. transaction.version 0 to
        # match a broker that finalizes none.
        self.features = dict(features or {})
        super().__init__(ready_timeout, keep_dir, "kafka-compat-")
        self.overrides = dict(overrides or {})
        # Further client listeners by name, beyond PLAINTEXT (the harness's
        # and the inter-broker one), on ports picked at the first start and
        # advertised as they are; their protocols come from the overrides'
        # listener.security.protocol.map.
        self.extra_listeners = {name: 0 for name in listeners}
        self.jvm_opts = list(jvm_opts or JVM_OPTS)
        self.props_path = os.path.join(self.tmp, "server.properties")
        self.log4j_path = os.path.join(self.tmp, "log4j2.yaml")
        self.controller_port = 0
        self.formatted = False

    def _properties(self):
        props = node_properties(1, "1@127.0.0.1:%d" % self.controller_port, self.port, self.controller_port,
                                self.log_dir)
        props.update({
            # Kafka's shipped server.properties for a single node:
            "offsets.topic.replication.factor": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
        })
        extra = ",".join("%s://127.0.0.1:%d" % (n, p) for n, p in self.extra_listeners.items())
        if extra:
            props["listeners"] += "," + extra
            props["advertised.listeners"] += "," + extra
        props.update(self.overrides)
        return props

    def listener_ports(self):
        """{listener name: port} of the client listeners (PLAINTEXT and the extra ones)."""
        return dict(self.extra_listeners, PLAINTEXT=self.port)

    def _java(self, main, *args):
        return ["java", *self.jvm_opts, "-Dlog4j2.configurationFile=" + self.log4j_path,
                "-cp", self.classpath, main, *args]

    # -- lifecycle ----------------------------------------------------------

    def start(self):
        if self.proc is not None:
            raise KafkaError("kafka is already running (pid %d)" % self.proc.pid)
        if not self.port:
            self.port = free_port()
            self.controller_port = free_port()
            for name in self.extra_listeners:
                self.extra_listeners[name] = free_port()
        with open(self.props_path, "w") as f:
            for k, v in self._properties().items():
                f.write("%s=%s\n" % (k, v))
        with open(self.log4j_path, "w") as f:
            f.write(LOG4J2)
        with open(self.log_path, "ab") as log:
            if not self.formatted:
                fmt = self._java("kafka.tools.StorageTool", "format", "--cluster-id=" + self._cluster_id(),
                                 "-c", self.props_path,
                                 *("--feature=%s=%s" % kv for kv in sorted(self.features.items())))
                log.write(b"=== kafka format: %s\n" % " ".join(fmt).encode())
                log.flush()
                rc = subprocess.run(fmt, stdin=subprocess.DEVNULL, stdout=log, stderr=log, timeout=120).returncode
                if rc != 0:
                    self._fail("kafka-storage format exited with %d" % rc)
                self.formatted = True
            args = self._java("kafka.Kafka", self.props_path)
            log.write(b"=== kafka start: %s\n" % " ".join(args).encode())
            log.flush()
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        self._wait_for_metadata(time.monotonic() + self.ready_timeout)
        return self

    @staticmethod
    def _cluster_id():
        # kafka-storage random-uuid: a random UUID in URL-safe base64 without padding.
        import base64
        return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")

    def _ready(self, frame):
        """Ready once Metadata v1 lists at least one broker (the broker is unfenced)."""
        correlation, brokers = struct.unpack(">ii", frame[:8])
        if correlation != 7:
            return "wrong correlation id"
        return None if brokers > 0 else "no broker in metadata yet"


if __name__ == "__main__":
    # Smoke run: start, print the bootstrap address, stop.
    t0 = time.monotonic()
    with Kafka() as k:
        print("kafka %s up at %s in %.1f s (pid %d)" % (KAFKA_VERSION, k.bootstrap, time.monotonic() - t0, k.proc.pid))
