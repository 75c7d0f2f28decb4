"""What the Flume Kafka source row and the Kafka channel row share
(clients/flume-kafka-source/run, clients/flume-kafka-channel/run).

Both start real Flume 1.11.0 agents (org.apache.flume.node.Application) on
the classpath of kafka-rows-pom.xml, and read what an agent delivered from a
file_roll sink with the header_and_text serializer: one line per event,
`{h1=v1, h2=v2} body`, flushed before the sink's channel transaction commits,
so the file holds exactly the events taken, each once. The test's own client
is Debian's confluent_kafka (librdkafka), the reader of the Kafka sink row.
"""

import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
# free_port() and Feeder (a netcat source's line-and-"OK" protocol) are the Kafka sink row's.
_loader = importlib.machinery.SourceFileLoader("flume_sink_driver", os.path.join(HERE, "run"))
sink_driver = importlib.util.module_from_spec(importlib.util.spec_from_loader(_loader.name, _loader))
_loader.exec_module(sink_driver)
free_port = sink_driver.free_port
Feeder = sink_driver.Feeder
# partition0() and watch_leader() are its leader_failover's (failover.py).
partition0 = sink_driver.failover.partition0
watch_leader = sink_driver.failover.watch_leader

NO_ADMIN = ("Flume has no admin client: an agent is sources, channels and sinks")


def logger(tag):
    def log(*a):
        print("[%s]" % tag, *a, file=sys.stderr, flush=True)
    return log


def emit(scenario, status, detail):
    print(json.dumps({"scenario": scenario, "status": status, "detail": detail}), flush=True)


class _All:
    def __contains__(self, sid):
        return True


def only():
    """The scenarios to run: $MATRIX_ONLY's (run_matrix.py --only), else all."""
    wanted = [s for s in os.environ.get("MATRIX_ONLY", "").split(",") if s]
    return set(wanted) if wanted else _All()


def prepare(cache, row, log):
    """Copies kafka-rows-pom.xml's classpath into <cache>/<row>/lib (once per pom)."""
    pom = os.path.join(HERE, "kafka-rows-pom.xml")
    root = os.path.join(cache, row)
    lib = os.path.join(root, "lib")
    with open(pom, "rb") as f:
        stamp = f.read()
    marker = os.path.join(lib, ".pom")
    if os.path.exists(marker):
        with open(marker, "rb") as f:
            if f.read() == stamp:
                return lib
    staging = lib + ".tmp"
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(root, exist_ok=True)
    log("fetching Flume 1.11.0's Kafka source and channel with Maven into", root)
    subprocess.run(["nice", "mvn", "-B", "-q", "-Dstyle.color=never", "-f", pom,
                    "-Dmaven.repo.local=" + os.path.join(root, "m2"), "dependency:copy-dependencies",
                    "-DincludeScope=runtime", "-DoutputDirectory=" + staging],
                   check=True, timeout=900, stdout=sys.stderr)
    with open(os.path.join(staging, ".pom"), "wb") as f:
        f.write(stamp)
    shutil.rmtree(lib, ignore_errors=True)
    os.rename(staging, lib)
    return lib


# -- configuration pieces ------------------------------------------------------

def memory_channel(agent, ch, capacity=10000):
    return ["%s.channels.%s.type = memory" % (agent, ch),
            "%s.channels.%s.capacity = %d" % (agent, ch, capacity),
            "%s.channels.%s.transactionCapacity = 100" % (agent, ch)]


def file_roll_sink(agent, sink, ch, directory):
    """A sink writing `{headers} body` lines into directory, one file (no rolling)."""
    os.makedirs(directory, exist_ok=True)
    return ["%s.sinks.%s.type = file_roll" % (agent, sink),
            "%s.sinks.%s.channel = %s" % (agent, sink, ch),
            "%s.sinks.%s.sink.directory = %s" % (agent, sink, directory),
            "%s.sinks.%s.sink.rollInterval = 0" % (agent, sink),
            "%s.sinks.%s.sink.batchSize = 10" % (agent, sink),
            "%s.sinks.%s.sink.serializer = header_and_text" % (agent, sink)]


def props(agent, kind, name, settings):
    return ["%s.%s.%s.%s = %s" % (agent, kind, name, k, v) for k, v in settings.items()]


class Agent:
    """One agent JVM, its configuration the lines given (sources, channels and
    sinks named in them); stopped by its pid."""

    def __init__(self, lib, tmp, label, sources, channels, sinks, lines, log):
        self.dir = os.path.join(tmp, label)
        os.makedirs(self.dir, exist_ok=True)
        self.log = log
        self.log_path = os.path.join(self.dir, "flume-agent.log")
        self.conf_path = os.path.join(self.dir, "agent.properties")
        head = ["a1.sources = " + " ".join(sources), "a1.channels = " + " ".join(channels),
                "a1.sinks = " + " ".join(sinks)]
        with open(self.conf_path, "w") as f:
            f.write("\n".join(head + lines) + "\n")
        self.cmd = ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-Djava.io.tmpdir=" + self.dir,
                    "-Dlog4j.configurationFile=" + os.path.join(HERE, "log4j2.xml"),
                    "-Dflume.log.file=" + self.log_path,
                    "-cp", os.path.join(lib, "*"),
                    "org.apache.flume.node.Application", "-n", "a1", "-f", self.conf_path, "--no-reload-conf"]
        self.proc = None

    def start(self, ready, what, timeout=120.0):
        """Starts the JVM and waits (bounded) until ready(self) is true."""
        self.proc = subprocess.Popen(self.cmd, stdout=open(os.path.join(self.dir, "agent.out"), "wb"),
                                     stderr=subprocess.STDOUT)
        self.log("agent pid", self.proc.pid, "log", self.log_path)
        deadline = time.time() + timeout
        while not ready(self):
            if self.proc.poll() is not None:
                raise RuntimeError("agent exited with %s: %s" % (self.proc.returncode, self.tail()))
            if time.time() > deadline:
                raise RuntimeError("agent not ready after %.0fs (%s): %s" % (timeout, what, self.tail()))
            time.sleep(0.3)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def text(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def tail(self, n=15):
        out = ""
        try:
            with open(os.path.join(self.dir, "agent.out"), errors="replace") as f:
                out = f.read()
        except OSError:
            pass
        return " | ".join((self.text() + out).strip().splitlines()[-n:])

    def client_config(self, kind, client_id):
        """The "ProducerConfig values" / "ConsumerConfig values" block kafka-clients
        logged for this client.id, as a dict, or None."""
        for block in self.text().split("%sConfig values:" % kind)[1:]:
            values = {}
            for line in block.splitlines()[1:]:
                m = re.match(r"^\s+([a-z0-9.]+) = (.*)$", line)
                if not m:
                    break
                values[m.group(1)] = m.group(2).strip()
            if values.get("client.id") == client_id:
                return values
        return None

    def positions(self, client_id, topic):
        """{partition: offset} the consumer client_id logged it starts at: reset
        by auto.offset.reset ("Resetting offset"), or resumed ("Setting offset
        ... to the committed offset")."""
        out = {}
        pat = (r"\[Consumer clientId=%s, groupId=[^\]]*\] (Resetting offset for partition|Setting offset for "
               r"partition) %s-(\d+) to (?:the committed offset|position) FetchPosition\{offset=(\d+)"
               % (re.escape(client_id), re.escape(topic)))
        for m in re.finditer(pat, self.text()):
            out[int(m.group(2))] = (int(m.group(3)), "reset" if m.group(1).startswith("Resetting") else "committed")
        return out


# -- what a file_roll sink wrote -------------------------------------------------

def read_events(directory):
    """[(headers, body)] of every line the file_roll sinks wrote into directory."""
    events = []
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        for line in data.decode("utf-8", "replace").splitlines():
            if not line.startswith("{") or "} " not in line:
                raise AssertionError("file_roll line not `{headers} body`: %r" % line)
            head, body = line[1:].split("} ", 1)
            headers = dict(kv.split("=", 1) for kv in head.split(", ")) if head else {}
            events.append((headers, body))
    return events


def wait_events(directory, n, timeout=90.0, grace=1.5):
    """The sink's events once n are there (bounded), looking grace s more for extra ones."""
    deadline = time.time() + timeout
    events = read_events(directory)
    while len(events) < n and time.time() < deadline:
        time.sleep(0.3)
        events = read_events(directory)
    time.sleep(grace)
    return read_events(directory)


def exactly_once(events, values, what):
    """Every value delivered once, nothing else: the bodies as a multiset."""
    bodies = [b for _, b in events]
    missing = [v for v in values if v not in bodies]
    extra = len(bodies) - len(values)
    dupes = sorted({b for b in bodies if bodies.count(b) > 1})
    if missing or dupes or extra:
        raise AssertionError("%s: %d events for %d sent; %d missing (first %r), %d duplicated (first %r)"
                             % (what, len(bodies), len(values), len(missing), missing[:1], len(dupes), dupes[:1]))


# -- the test's own client (confluent_kafka) -----------------------------------

def produce(bootstrap, topic, records, config=None):
    """Produces [(partition or None, key, value, headers, timestamp ms or 0)] with acks=all;
    returns [(partition, offset)] in order."""
    from confluent_kafka import Producer
    p = Producer(dict({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                       "max.in.flight.requests.per.connection": 1}, **(config or {})))
    reports = [None] * len(records)

    def done(i):
        def cb(err, msg):
            reports[i] = err or (msg.partition(), msg.offset())
        return cb
    for i, (partition, key, value, headers, ts) in enumerate(records):
        kw = {"key": key, "value": value, "on_delivery": done(i)}
        if partition is not None:
            kw["partition"] = partition
        if headers:
            kw["headers"] = headers
        if ts:
            kw["timestamp"] = ts
        p.produce(topic, **kw)
        p.poll(0)
    left = p.flush(60)
    bad = [r for r in reports if not isinstance(r, tuple)]
    if left or bad:
        raise RuntimeError("producing to %s: %d undelivered, errors %s" % (topic, left, bad[:2]))
    return reports


def create_topic(bootstrap, topic, partitions):
    """Creates topic (one replica per broker) and waits (bounded) until every
    broker of bootstrap names a leader for each partition in its metadata."""
    from confluent_kafka.admin import AdminClient, NewTopic
    brokers = bootstrap.split(",")
    a = AdminClient({"bootstrap.servers": bootstrap})
    for f in a.create_topics([NewTopic(topic, partitions, len(brokers))], request_timeout=30).values():
        f.result(60)
    deadline = time.time() + 30
    for broker in brokers:
        one = AdminClient({"bootstrap.servers": broker})
        while True:
            md = one.list_topics(topic, timeout=10).topics.get(topic)
            if md is not None and md.error is None and len(md.partitions) == partitions and \
                    all(p.leader >= 0 for p in md.partitions.values()):
                break
            if time.time() > deadline:
                raise RuntimeError("%s names no leader of every partition of %s (%d) after 30 s"
                                   % (broker, topic, partitions))
            time.sleep(0.3)


def full_isr_leader(admin, topic, brokers, timeout=30.0):
    """Waits (bounded) until partition 0's ISR is every broker; returns its leader."""
    deadline = time.time() + timeout
    while True:
        p = partition0(admin, topic)
        if p is not None and p[1] == sorted(brokers) and p[0] in brokers:
            return p[0]
        if time.time() > deadline:
            raise AssertionError("%s's ISR not %s after %.0f s: %s" % (topic, sorted(brokers), timeout, p))
        time.sleep(0.2)


def kill_leader_request(topic):
    """Asks the harness to kill partition 0's leader (the matrix README)."""
    print(json.dumps({"event": "kill_leader", "scenario": "leader_failover", "topic": topic, "partition": 0}),
          flush=True)


def read_topic(bootstrap, topic, partition, n, timeout=60.0):
    """[(offset, key, value, headers)] of the partition from its start, once n are read (bounded),
    and its (low, high) watermarks."""
    from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "flume-rows-reader",
                  "enable.auto.commit": False, "topic.metadata.refresh.interval.ms": 1000})
    try:
        c.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        got = []
        deadline = time.time() + timeout
        while len(got) < n and time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                got.append((m.offset(), m.key(), m.value(), m.headers()))
        end = time.time() + 1.0
        while time.time() < end:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append((m.offset(), m.key(), m.value(), m.headers()))
        return got, c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
    finally:
        c.close()


def log_end(bootstrap, topic, partitions):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "flume-rows-reader"})
    try:
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
    finally:
        c.close()


def committed(bootstrap, group, topic, partitions):
    """{partition: committed offset or None} of group (OffsetFetch; the asking consumer joins nothing)."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        got = c.committed([TopicPartition(topic, p) for p in partitions], timeout=10)
        return {tp.partition: (tp.offset if tp.offset >= 0 else None) for tp in got}
    finally:
        c.close()


def wait_committed_at_end(bootstrap, group, topic, partitions, timeout=30.0):
    """Waits (bounded) until group's committed offsets equal the log end of every
    partition; returns {partition: offset}. Flume commits once a batch is in its channel."""
    end = log_end(bootstrap, topic, partitions)
    deadline = time.time() + timeout
    while True:
        got = committed(bootstrap, group, topic, partitions)
        # A partition that never held a record has nothing to commit.
        if all(got[p] == end[p] or (got[p] is None and end[p] == 0) for p in end):
            return end
        if time.time() > deadline:
            raise AssertionError("group %s committed %s on %s, log end %s after %.0f s"
                                 % (group, got, topic, end, timeout))
        time.sleep(0.5)


def group_members(bootstrap, group):
    """(state, [(client id, {topic: [partitions]})] of each member) of group (ListGroups + DescribeGroups)."""
    from confluent_kafka.admin import AdminClient
    a = AdminClient({"bootstrap.servers": bootstrap})
    groups = [g for g in a.list_groups(group, timeout=10) if g.id == group]
    if not groups:
        return None, []
    g = groups[0]
    return g.state, [(m.client_id, consumer_assignment(m.assignment)) for m in g.members]


def wait_group(bootstrap, group, partitions, client_ids=None, count=None, timeout=90.0):
    """Waits (bounded) until group is Stable with exactly these members (client
    ids, or just how many), their assignments disjoint and covering partitions
    0..partitions-1; returns [(member client id, [partitions])], sorted."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        state, members = group_members(bootstrap, group)
        got = sorted((c, sorted(p for ps in a.values() for p in ps)) for c, a in members)
        last = (state, got)
        every = sorted(p for _, ps in got for p in ps)
        who = sorted(c for c, _ in got) == sorted(client_ids) if client_ids is not None else len(got) == count
        if state == "Stable" and who and every == list(range(partitions)) and all(ps for _, ps in got):
            return got
        time.sleep(0.5)
    raise AssertionError("group %s not Stable with %s members covering %d partitions in %.0f s: last %s"
                         % (group, sorted(client_ids) if client_ids is not None else count, partitions,
                            timeout, last))


def consumer_assignment(data):
    """The consumer protocol's Assignment: version int16, [topic string16, [partition int32]], userdata."""
    out = {}
    if not data:
        return out
    pos = 2
    (topics,) = struct.unpack_from(">i", data, pos)
    pos += 4
    for _ in range(topics):
        (n,) = struct.unpack_from(">h", data, pos)
        topic = data[pos + 2:pos + 2 + n].decode()
        pos += 2 + n
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out[topic] = sorted(struct.unpack_from(">%di" % count, data, pos))
        pos += 4 * count
    return out


# -- the security columns (--security FILE; ../../security_columns.py) ----------

def security_columns(path):
    """{scenario id: column} of a driver's --security FILE."""
    with open(path) as f:
        return json.load(f)


def secured_settings(column, prefix):
    """The column's kafka-clients settings (the Kafka sink row's: a PKCS12 key
    store for mTLS) as agent properties under prefix ("kafka.consumer." ...),
    escaped for java.util.Properties."""
    return {prefix + k: v.replace("\\", "\\\\") for k, v in sink_driver.java_settings(column).items()}


def check_secured_client(agent, kind, client_id, column):
    """The client (kind "Consumer" or "Producer") logged the column's security
    protocol and SASL mechanism; returns what it logged, for the detail."""
    cfg = agent.client_config(kind, client_id)
    if cfg is None:
        raise AssertionError("agent log has no %sConfig block for client.id %s" % (kind, client_id))
    said = "security.protocol=%s" % cfg.get("security.protocol")
    if cfg.get("security.protocol") != column["security_protocol"]:
        raise AssertionError("%s %s ran with %s, the column's is %s" % (kind, client_id, said,
                                                                        column["security_protocol"]))
    if "sasl_mechanism" in column:
        if cfg.get("sasl.mechanism") != column["sasl_mechanism"]:
            raise AssertionError("%s %s ran with sasl.mechanism=%s, the column's is %s"
                                 % (kind, client_id, cfg.get("sasl.mechanism"), column["sasl_mechanism"]))
        said += ", sasl.mechanism=%s" % cfg["sasl.mechanism"]
    if "client_p12" in column:
        said += ", ssl.keystore.type=%s" % cfg.get("ssl.keystore.type")
    return said
