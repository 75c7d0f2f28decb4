"""A real etcd and N real `runnel serve` brokers in cluster mode, for the
cluster tests (label "cluster").

  - Etcd: Debian's etcd-server (/usr/bin/etcd, or $RUNNEL_ETCD) on free
    loopback ports with a fresh data dir, the command line of
    cluster/testing/etcd_process.h; ready when /health says so (bounded);
    stopped by its pid (SIGTERM, then SIGKILL); SIGKILLed by the kernel if
    the test process dies first (PR_SET_PDEATHSIG). For outages:
    sigstop(), sigcont(), kill9() and restart() (the same data dir and
    ports); get(key) reads a key through etcd's JSON gateway.
  - Cluster: one Etcd, N brokers (runnel_harness.Runnel, node ids 1..N, each
    its own temporary dir and kernel-picked port, kept across restarts), all
    pointed at the etcd under a prefix of their own. Brokers are named by
    node id: kill9(2), sigstop(2), sigcont(2), stop(2), start(2), restart(2).
    start() returns once every broker's Metadata lists every broker and
    names a live one as controller (bounded). etcd_controller() is the
    broker elected in etcd, which Metadata does not name (as Kafka's
    brokers do not name the active controller).
    Cluster(..., proxied=True) puts a loopback proxy (faults/proxy.py) in
    front of each broker, which the broker advertises: clients after the
    bootstrap and the other brokers reach it through the proxy, which
    the fault harness (faults/schedule.py) cuts, holds and delays.
  - wait_until(predicate, timeout, what): the only way the tests wait.
  - Replicas: Cluster.wait_in_sync (every ISR full on every broker),
    list_offset (ListOffsets), wait_identical (the brokers' segment files
    of a partition byte for byte the same; or the logs the same and each
    broker's indexes valid for them).
  - Inside `with Cluster(...)`, or through run_tests(..., cluster), the log
    of every process is printed when a test fails.

Use with /usr/bin/python3 (Debian's, which has confluent-kafka and kafka-python).
"""

import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import kafka_wire as kw
from faults.proxy import FrameProxy
from runnel_harness import Runnel, runnel_binary, run_tests, set_parent_death_signal  # noqa: F401

NONE = 0
NOT_LEADER_OR_FOLLOWER = 6
TOPIC_ALREADY_EXISTS = 36
INVALID_REPLICATION_FACTOR = 38


class ClusterError(RuntimeError):
    pass


def free_port():
    """A loopback port nothing listens on right now (bound and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout, what, poll=0.1):
    """Calls predicate() until it returns a true value (returned) or
    `timeout` seconds pass (AssertionError naming `what` and the last answer
    or exception). An exception from predicate counts as "not yet"."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            value = predicate()
            if value:
                return value
            last = value
        except Exception as e:  # not yet: a refused connection, an AssertionError with details
            last = "%s: %s" % (type(e).__name__, e)
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.1f s waiting for %s; last: %s" % (timeout, what, last))
        time.sleep(poll)


def process_state(pid):
    """The state letter of /proc/<pid>/stat (R, S, T, ...)."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def seed_assignment(live_ids, partitions, replication_factor):
    """The seed rule: sort the live ids; partition i's replicas are
    sorted[(i + j) mod n] for j = 0..rf-1, the first the preferred leader."""
    ids = sorted(live_ids)
    n = len(ids)
    return {i: [ids[(i + j) % n] for j in range(replication_factor)] for i in range(partitions)}


class Etcd:
    binary = os.environ.get("RUNNEL_ETCD", "/usr/bin/etcd")
    name = "etcd"

    def __init__(self, ready_timeout=20.0, keep_dir=False):
        self.ready_timeout = ready_timeout
        self.keep_dir = keep_dir
        self.tmp = tempfile.mkdtemp(prefix="runnel-etcd-")
        self.log_path = os.path.join(self.tmp, "etcd.log")
        self.client_port = self.peer_port = 0
        self.proc = None

    @property
    def endpoint(self):
        return "http://127.0.0.1:%d" % self.client_port

    def args(self):
        client, peer = self.endpoint, "http://127.0.0.1:%d" % self.peer_port
        return [self.binary, "--data-dir", os.path.join(self.tmp, "data"),
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "default=" + peer]

    def start(self):
        # A port taken between free_port() and etcd's bind fails the start: retry.
        for _ in range(3):
            self.client_port, self.peer_port = free_port(), free_port()
            self._spawn()
            if self._wait_ready():
                return self
            self.stop()
        self._dump()
        raise ClusterError("etcd did not become healthy in %.0f s (3 tries)" % self.ready_timeout)

    def restart(self):
        """Starts etcd again on the same data dir and ports, after stop()
        or kill9(): the same cluster, its keys and leases, to its clients."""
        assert self.proc is None, "etcd is still running (pid %d)" % self.proc.pid
        self._spawn()
        if not self._wait_ready():
            self._dump()
            raise ClusterError("etcd did not become healthy again in %.0f s" % self.ready_timeout)
        return self

    def _spawn(self):
        with open(self.log_path, "ab") as log:
            log.write(b"=== etcd start: %s\n" % " ".join(self.args()).encode())
            log.flush()
            self.proc = subprocess.Popen(self.args(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         preexec_fn=set_parent_death_signal)

    def kill9(self):
        """SIGKILL by pid; the data dir stays for restart()."""
        proc, self.proc = self.proc, None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def sigstop(self):
        """SIGSTOP by pid, returning once the kernel shows it stopped."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        wait_until(lambda: process_state(self.proc.pid) == "T", 10.0, "etcd to stop (SIGSTOP)", poll=0.005)

    def sigcont(self):
        os.kill(self.proc.pid, signal.SIGCONT)

    def get(self, key, timeout=5.0):
        """One key through etcd's JSON gateway: {"value": bytes, "create_revision",
        "mod_revision", "lease"} (ints), or None when absent."""
        request = json.dumps({"key": base64.b64encode(key.encode()).decode()}).encode()
        with urllib.request.urlopen(self.endpoint + "/v3/kv/range", data=request, timeout=timeout) as r:
            kvs = json.loads(r.read()).get("kvs") or []
        if not kvs:
            return None
        kv = kvs[0]
        out = {name: int(kv.get(name, 0)) for name in ("create_revision", "mod_revision", "lease")}
        out["value"] = base64.b64decode(kv.get("value", ""))
        return out

    def _wait_ready(self):
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if self.healthy():
                return True
            time.sleep(0.05)
        return False

    def healthy(self):
        try:
            with urllib.request.urlopen(self.endpoint + "/health", timeout=1) as r:
                return b'"health":"true"' in r.read()
        except OSError:
            return False

    def stop(self, timeout=5.0):
        """SIGTERM by pid, SIGKILL if it has not exited within `timeout`."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)  # a stopped etcd cannot handle SIGTERM
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(10)

    def close(self):
        try:
            self.stop()
        finally:
            if not self.keep_dir:
                shutil.rmtree(self.tmp, ignore_errors=True)

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _dump(self, limit=100_000):
        text = self.log_text()
        if len(text) > limit:
            text = "... (%d bytes cut)\n" % (len(text) - limit) + text[-limit:]
        sys.stderr.write("----- etcd log (%s) -----\n%s----- end of etcd log -----\n" % (self.log_path, text))
        sys.stderr.flush()

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self._dump()
        self.close()
        return False


class ClusterBroker(Runnel):
    """A Runnel that dies with the test and is named by its node id."""
    die_with_parent = True

    def __init__(self, node_id, binary, overrides, keep_dir, ready_timeout):
        super().__init__(binary, overrides, keep_dir, ready_timeout, prefix="runnel-cluster-%d-" % node_id)
        self.node_id = node_id
        self.name = "runnel node %d" % node_id
        self.stopped = False  # SIGSTOPped

    def stop(self, timeout=None):
        if self.stopped and self.proc is not None:  # a stopped process cannot handle SIGTERM
            os.kill(self.proc.pid, signal.SIGCONT)
            self.stopped = False
        return super().stop(timeout)

    def kill9(self):
        self.stopped = False  # SIGKILL ends a stopped process too
        super().kill9()


class Cluster:
    def __init__(self, n=3, binary=None, overrides=None, session_timeout_ms=3000, heartbeat_interval_ms=1000,
                 ready_timeout=30.0, form_timeout=30.0, keep_dir=False, proxied=False):
        self.n = n
        self.form_timeout = form_timeout
        self.session_timeout_ms = session_timeout_ms
        self.ready_timeout = ready_timeout
        self.etcd = Etcd(keep_dir=keep_dir)
        self.prefix = "/runnel-test-%s/" % uuid.uuid4().hex[:12]
        binary = binary or runnel_binary()
        base = {
            "runnel.etcd.prefix": self.prefix,
            "broker.session.timeout.ms": str(session_timeout_ms),
            "broker.heartbeat.interval.ms": str(heartbeat_interval_ms),
            "default.replication.factor": "1",
            "offsets.topic.replication.factor": str(min(3, n)),
            "min.insync.replicas": "1",
            "num.partitions": "1",
            "group.initial.rebalance.delay.ms": "0",
        }
        base.update(overrides or {})
        self.brokers = {i: ClusterBroker(i, binary, dict(base, **{"node.id": str(i)}), keep_dir, ready_timeout)
                        for i in range(1, n + 1)}
        self.proxies = {i: FrameProxy("proxy-%d" % i) for i in self.brokers} if proxied else {}
        for i, proxy in self.proxies.items():
            self.brokers[i].overrides["advertised.listeners"] = "PLAINTEXT://%s" % proxy.address
        self._corr = 100

    # -- lifecycle ------------------------------------------------------------

    def start(self):
        self.etcd.start()
        for b in self.brokers.values():
            b.overrides["runnel.etcd.endpoints"] = self.etcd.endpoint
            b.start()
            if b.node_id in self.proxies:
                self.proxies[b.node_id].upstream_port = b.port  # the same across restarts
        self.wait_formed(self.form_timeout, "the %d brokers to form a cluster" % self.n)
        return self

    def wait_formed(self, timeout, what):
        """Every live broker's Metadata lists exactly the live brokers (at
        their ports) and names one of them as controller."""
        def formed():
            live = self.live_ids()
            views = {i: self.metadata(i) for i in live}
            for i, md in views.items():
                listed = {nid: port for nid, (host, port, _) in md["brokers"].items()}
                want = {j: self.advertised_port(j) for j in live}
                assert listed == want, "node %d lists %s, want %s" % (i, listed, want)
            named = {i: md["controller_id"] for i, md in views.items()}
            assert set(named.values()) <= set(live), "controllers named: %s" % named
            return True
        return wait_until(formed, timeout, what)

    def start_broker(self, node_id):
        """Starts a broker that was stopped or killed (same dir, same port)."""
        return self.brokers[node_id].start()

    def stop(self, node_id, timeout=None):
        return self.brokers[node_id].stop(timeout)

    def kill9(self, node_id):
        self.brokers[node_id].kill9()

    def restart(self, node_id, graceful=True):
        b = self.brokers[node_id]
        if b.proc is None:
            return b.start()
        return b.restart(graceful)

    def sigstop(self, node_id):
        """SIGSTOP, and returns once the kernel shows the process stopped
        (state T), so that nothing it does afterwards races the caller."""
        b = self.brokers[node_id]
        os.kill(b.proc.pid, signal.SIGSTOP)
        b.stopped = True
        wait_until(lambda: process_state(b.proc.pid) == "T", 10.0, "node %d to stop (SIGSTOP)" % node_id,
                   poll=0.005)

    def sigcont(self, node_id):
        b = self.brokers[node_id]
        os.kill(b.proc.pid, signal.SIGCONT)
        b.stopped = False

    def live_ids(self):
        """Brokers running and not SIGSTOPped."""
        return sorted(i for i, b in self.brokers.items() if b.alive() and not b.stopped)

    def bootstrap(self, node_ids=None):
        ids = self.live_ids() if node_ids is None else node_ids
        return ",".join(self.brokers[i].bootstrap for i in ids)

    def port(self, node_id):
        return self.brokers[node_id].port

    def advertised_port(self, node_id):
        """Where Metadata sends clients: the proxy's port when proxied."""
        proxy = self.proxies.get(node_id)
        return proxy.port if proxy else self.port(node_id)

    def close(self):
        errors = []
        for b in self.brokers.values():
            try:
                b.close()
            except Exception as e:
                errors.append("%s: %s" % (b.name, e))
        self.etcd.close()
        for proxy in self.proxies.values():
            proxy.close()
        if errors:
            sys.stderr.write("cluster close: %s\n" % "; ".join(errors))

    def _dump(self):
        self.etcd._dump()
        for b in self.brokers.values():
            b._dump()

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self._dump()
            self.close()
            raise

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self._dump()
        self.close()
        return False

    # -- wire helpers ---------------------------------------------------------

    def _next_corr(self):
        self._corr += 1
        return self._corr

    def call(self, node_id, frame_fn, timeout=10.0):
        """frame_fn(correlation_id) -> request bytes; returns the response body."""
        corr = self._next_corr()
        with kw.Connection(self.port(node_id), timeout=timeout) as c:
            return c.call(frame_fn(corr), corr)

    def metadata(self, node_id, topics=None):
        """node_id's Metadata v7 answer, parsed (kafka_wire.parse_metadata_v7)."""
        return kw.parse_metadata_v7(self.call(node_id, lambda corr: kw.metadata_v7(corr, topics)))

    def controller(self, node_id):
        """The controller id node_id's Metadata names: a live broker."""
        return self.metadata(node_id)["controller_id"]

    def etcd_controller(self):
        """The node id etcd's controller key holds (the broker elected to
        make leader elections), or None while no broker holds it."""
        kv = self.etcd_get("controller")
        return json.loads(kv["value"])["id"] if kv else None

    def etcd_get(self, key):
        """A key of this cluster (cluster/etcd/key_layout.h, under the prefix)
        as etcd holds it (Etcd.get)."""
        return self.etcd.get(self.prefix + key)

    def create_topics_raw(self, node_id, topics, timeout_ms=10000):
        """CreateTopics v4 sent to node_id: -> {name: (error_code, message)}."""
        body = self.call(node_id, lambda corr: kw.create_topics_v4(corr, topics, timeout_ms),
                         timeout=timeout_ms / 1000 + 10)
        return {name: (err, msg) for name, err, msg in kw.parse_create_topics_v4(body)}

    def partitions(self, node_id, topic):
        """{index: partition dict} of `topic` in node_id's Metadata; asserts no error."""
        md = self.metadata(node_id, [topic])
        t = md["topics"].get(topic)
        assert t is not None, "node %d's Metadata has no %s" % (node_id, topic)
        assert t["error"] == NONE, "node %d: topic %s error %d" % (node_id, topic, t["error"])
        return t["partitions"]

    def wait_assignment(self, topic, expected, timeout, node_ids=None):
        """Every broker named (default: all live) shows `topic` with exactly
        `expected` ({index: replicas}), each leader the first replica and
        the ISR all replicas, and all agree on the leader epochs; returns
        one broker's partitions."""
        def agreed():
            views = {}
            for i in node_ids or self.live_ids():
                parts = self.partitions(i, topic)
                got = {p: v["replicas"] for p, v in parts.items()}
                assert got == expected, "node %d: replicas %s, want %s" % (i, got, expected)
                for p, v in parts.items():
                    assert v["error"] == NONE, "node %d: %s-%d error %d" % (i, topic, p, v["error"])
                    assert v["leader"] == v["replicas"][0], "node %d: %s-%d leader %d, replicas %s" % (
                        i, topic, p, v["leader"], v["replicas"])
                    assert sorted(v["isr"]) == sorted(v["replicas"]), "node %d: %s-%d isr %s, replicas %s" % (
                        i, topic, p, v["isr"], v["replicas"])
                views[i] = {p: (v["leader"], v["leader_epoch"]) for p, v in parts.items()}
            assert len({tuple(sorted(v.items())) for v in views.values()}) == 1, "leaders/epochs differ: %s" % views
            return parts
        return wait_until(agreed, timeout, "%s's assignment %s on every broker" % (topic, expected))

    def wait_in_sync(self, topic, timeout, replicas=None):
        """Every live broker shows every partition of `topic` led and with
        its full replica set (or `replicas` members) in the ISR; returns
        one broker's partitions."""
        def synced():
            for i in self.live_ids():
                for p, v in self.partitions(i, topic).items():
                    want = len(v["replicas"]) if replicas is None else replicas
                    assert v["leader"] >= 0 and len(v["isr"]) == want, "node %d: %s-%d leader %d, isr %s" % (
                        i, topic, p, v["leader"], v["isr"])
            return self.partitions(self.live_ids()[0], topic)
        return wait_until(synced, timeout, "%s fully in sync" % topic)


# -- replicas ---------------------------------------------------------------------

def list_offset(c, node_id, topic, p, timestamp=-1, replica_id=-1):
    """ListOffsets v1 latest (-1) or earliest (-2) of topic-p on node_id: -> offset; asserts no error.
    replica_id -2 (debugging) asks a follower too."""
    body = c.call(node_id, lambda corr: kw.list_offsets_v1(corr, topic, [p], timestamp, replica_id))
    err, off = kw.parse_list_offsets_v1(body)[(topic, p)]
    assert err == NONE, "ListOffsets %s-%d on node %d: error %d" % (topic, p, node_id, err)
    return off


def partition_dir(c, node_id, topic, p):
    return os.path.join(c.brokers[node_id].log_dir, "%s-%d" % (topic, p))


SEGMENT_SUFFIXES = (".log", ".index", ".timeindex")


def segment_files(c, node_id, topic, p):
    """{file name: bytes} of the .log/.index/.timeindex files of node_id's topic-p."""
    d = partition_dir(c, node_id, topic, p)
    out = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(SEGMENT_SUFFIXES):
            with open(os.path.join(d, name), "rb") as f:
                out[name] = f.read()
    return out


def describe_difference(files):
    """A short account of how the brokers' segment files differ, or None."""
    names = {i: sorted(f) for i, f in files.items()}
    ref_id = min(files)
    if len({tuple(v) for v in names.values()}) != 1:
        return "file names differ: %s" % names
    diffs = []
    for name in names[ref_id]:
        ref = files[ref_id][name]
        for i, f in files.items():
            data = f[name]
            if data != ref:
                first = next((k for k in range(min(len(ref), len(data))) if ref[k] != data[k]),
                             min(len(ref), len(data)))
                diffs.append("%s: node %d %d bytes, node %d %d bytes, first difference at byte %d" % (
                    name, ref_id, len(ref), i, len(data), first))
    return "; ".join(diffs) if diffs else None


def wait_identical(c, topic, p, timeout, node_ids=None, indexes="identical", empty_last_segment=False):
    """Waits until the brokers' (default: all) segment files of topic-p are
    byte-identical (the replicas have caught up: equal log ends); returns
    {name: size}. indexes="valid" compares the .log files byte for byte and
    only checks each broker's .index/.timeindex against them
    (index_problems): a broker that recovered from a crash, or closed
    cleanly, has time index entries the others lack, as Kafka's do
    (LogSegment.recover and close append the largest timestamp so far).
    empty_last_segment: a broker's empty last segment (rolled just before
    a crash, its first batch lost; Kafka's recovery keeps such a file too)
    is left out of the comparison."""
    node_ids = sorted(c.brokers) if node_ids is None else node_ids
    compared = SEGMENT_SUFFIXES if indexes == "identical" else (".log",)

    def same():
        files = {i: segment_files(c, i, topic, p) for i in node_ids}
        if empty_last_segment:
            for f in files.values():
                logs = sorted(n for n in f if n.endswith(".log"))
                if len(logs) > 1 and not f[logs[-1]]:
                    for suffix in SEGMENT_SUFFIXES:
                        f.pop(logs[-1][:-len(".log")] + suffix, None)
        diff = describe_difference({i: {n: d for n, d in f.items() if n.endswith(compared)}
                                    for i, f in files.items()})
        assert diff is None, diff
        if indexes != "identical":
            problems = ["node %d: %s" % (i, e) for i in node_ids for e in index_problems(files[i])]
            assert not problems, "; ".join(problems[:5])
        return {name: len(data) for name, data in files[node_ids[0]].items()}
    return wait_until(same, timeout, "identical segment files of %s-%d on nodes %s" % (topic, p, list(node_ids)),
                      poll=0.5)


def log_batches(data):
    """The v2 batches of a .log file's bytes: [(position, base offset, last
    offset, max timestamp)], up to a partial or zero-filled tail."""
    out, pos = [], 0
    while pos + 61 <= len(data):
        h = kw.batch_header(data[pos:pos + 61])
        if h["length"] <= 0 or pos + 12 + h["length"] > len(data):
            break
        out.append((pos, h["base_offset"], h["base_offset"] + h["last_offset_delta"], h["max_timestamp"]))
        pos += 12 + h["length"]
    return out


def index_entries(data, fmt):
    """The entries of an .index (">iI": relative offset, position) or
    .timeindex (">qI": timestamp, relative offset) file, up to the
    zero-filled tail of a preallocated active segment's file."""
    size = struct.calcsize(fmt)
    out = []
    for pos in range(0, len(data) - size + 1, size):
        entry = struct.unpack(fmt, data[pos:pos + size])
        if entry == (0, 0):
            break
        out.append(entry)
    return out


def index_problems(files):
    """How one broker's .index/.timeindex files (from segment_files)
    disagree with its .log files: an offset index entry must name the
    position of a batch starting at or before its offset, a time index
    entry the largest timestamp of the batches up to its offset, taken from
    the batch holding that offset; both in increasing order."""
    problems = []
    for name in sorted(n for n in files if n.endswith(".log")):
        stem, base = name[:-4], int(name[:-4])
        batches = log_batches(files[name])
        starts = {pos: first for pos, first, _, _ in batches}
        offsets = index_entries(files.get(stem + ".index", b""), ">iI")
        for (rel, pos), nxt in zip(offsets, offsets[1:] + [None]):
            if starts.get(pos, base + rel + 1) > base + rel or (nxt is not None and nxt <= (rel, pos)):
                problems.append("%s.index entry (%d, %d) names no batch at or before offset %d in order" % (
                    stem, rel, pos, base + rel))
        times = index_entries(files.get(stem + ".timeindex", b""), ">qI")
        for (ts, rel), nxt in zip(times, times[1:] + [None]):
            offset = base + rel
            holding = [b for b in batches if b[1] <= offset <= b[2]]
            largest = max((b[3] for b in batches if b[1] <= offset), default=None)
            if not holding or holding[0][3] != ts or largest != ts or (nxt is not None and nxt[0] <= ts):
                problems.append("%s.timeindex entry (%d, %d): batch holding offset %d has max timestamp %s, "
                                "largest up to it %s" % (stem, ts, rel, offset,
                                                         holding[0][3] if holding else None, largest))
    return problems


# -- client helpers -------------------------------------------------------------

def admin(bootstrap):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 10000})


def create_topic(bootstrap, name, partitions, replication_factor, config=None, timeout=30.0):
    """Through confluent_kafka's AdminClient; raises its KafkaException on an error."""
    from confluent_kafka.admin import NewTopic
    client = admin(bootstrap)  # held until the result: its handle is destroyed with it
    futures = client.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=replication_factor, config=config or {})],
        operation_timeout=timeout / 2, request_timeout=timeout)
    return futures[name].result(timeout=timeout + 5)


def produce(bootstrap, topic, records, acks="all", timeout=40.0):
    """records: [(partition, key bytes, value bytes)]; -> {partition: [offsets]}
    in delivery order; asserts every record was delivered without error."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 5,
                  "message.timeout.ms": int(timeout * 1000 * 0.75), "enable.idempotence": False})
    errors, offsets = [], {}

    def delivered(err, msg):
        if err is not None:
            errors.append((msg.partition(), err))
        else:
            offsets.setdefault(msg.partition(), []).append(msg.offset())

    for partition, key, value in records:
        while True:
            try:
                p.produce(topic, value=value, key=key, partition=partition, on_delivery=delivered)
                break
            except BufferError:
                p.poll(0.1)
    left = p.flush(timeout)
    assert left == 0, "%d records not delivered to %s in %.0f s (errors so far: %s)" % (left, topic, timeout, errors[:5])
    assert not errors, "delivery errors on %s: %s" % (topic, errors[:5])
    return offsets


def consume(bootstrap, topic, partition, count, timeout=30.0):
    """The first `count` records of topic-partition, read from the start
    (assign, no group commits): -> [(offset, key, value)]."""
    from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "cluster-test-%s" % uuid.uuid4().hex[:8],
                  "enable.auto.commit": False, "enable.partition.eof": False})
    out = []
    try:
        c.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        deadline = time.monotonic() + timeout
        while len(out) < count and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            assert m.error() is None, "consume %s-%d: %s" % (topic, partition, m.error())
            out.append((m.offset(), m.key(), m.value()))
    finally:
        c.close()
    assert len(out) >= count, "read %d of %d records from %s-%d in %.0f s" % (len(out), count, topic, partition, timeout)
    return out[:count]


def records_for(partition, count, tag):
    return [(partition, b"%s-k%d" % (tag, i), b"%s-p%d-v%d" % (tag, partition, i)) for i in range(count)]
