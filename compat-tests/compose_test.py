"""docker/compose.yaml run outside a container (label "cluster"): this
machine has a docker client and no engine, so the file is checked the way
its containers would run it. Each service's image is the docker/Dockerfile
stage it builds (compat-tests/dockerfile.py reads it): the stage's ENV,
ENTRYPOINT, HEALTHCHECK and installed scripts, then the service's
`command`, `environment` and volumes from the file (PyYAML), run as
processes here from the repository root (the runtime stage's WORKDIR has
the same config/server.properties), with `runnel` and the image's scripts
on PATH where the image installs them. What a container gets from its own
network namespace is mapped onto loopback, and nothing else is changed:

  - a service's host name (etcd, broker1..3) is 127.0.0.1;
  - each port a service listens on (0.0.0.0:PORT in its command or
    environment: etcd's 2379 and 2380, a broker's INTERNAL 19092, its
    EXTERNAL port published on the host, its admin 9644) is a free port of
    its own: in compose every container has its own 19092 and 9644;
  - each volume's mount point is a fresh directory.

Then, as the file's header says a user does: etcd comes up and passes its
healthcheck before the brokers start (depends_on: service_healthy); every
broker passes its image's healthcheck (/v1/status/ready: registered); the
host's view through EXTERNAL (`kcat -L -b 127.0.0.1:9092`) lists the three
brokers at their published addresses; a topic takes the file's defaults
(replication factor 3, min.insync.replicas 2), acks=all records go in and
come back out; and `docker compose down` (SIGTERM to each container) stops
every broker.

Prometheus and Grafana are their projects' images and are not run here:
prometheus.yml's targets must be exactly the brokers' admin listeners (each
serving /metrics), Grafana's provisioning must name that Prometheus and the
mounted dashboard, the dashboard must be docker/grafana/dashboard.py's
output, and every metric its panels query must be one the running brokers
export, with the labels the panel uses (scraped after the records above
went through).

  /usr/bin/python3 compat-tests/compose_test.py build/debug/runnel
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import urllib.request

import yaml

import dockerfile
from cluster_harness import consume, free_port, produce, records_for, run_tests, runnel_binary, wait_until
from runnel_harness import set_parent_death_signal

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCKER = os.path.join(REPO, "docker")
COMPOSE = os.path.join(DOCKER, "compose.yaml")
BOUND = 60.0  # seconds: CI machines are loaded
STOP_BOUND = 60.0
HOSTS = ("etcd", "broker1", "broker2", "broker3")  # run here as processes
OTHER_IMAGES = ("prometheus", "grafana")  # checked, not run
PROMETHEUS_SERIES = {"up": set()}  # what Prometheus itself records for every target
TARGET_LABELS = {"instance", "job"}  # what Prometheus adds to every series it scrapes


def compose_text(value, environment):
    """A command string as the container's shell gets it: compose turns $$
    into $, and the service's environment fills ${NAME}."""
    text = value.replace("$$", "$")
    return re.sub(r"\$\{(\w+)\}", lambda m: str(environment[m.group(1)]), text)


def listening_ports(texts):
    """The ports a container listens on: every 0.0.0.0:PORT in its command and environment."""
    return sorted({int(p) for t in texts for p in re.findall(r"0\.0\.0\.0:(\d+)", t)})


class Service:
    """One compose service as a process on loopback (see the docstring)."""

    def __init__(self, name, spec, stage, tmp, ports, bin_dir):
        self.name, self.spec, self.ports = name, spec, ports
        self.stage = stage
        self.command = spec.get("command") or stage.entrypoint()
        test = (spec.get("healthcheck") or {}).get("test") or ["CMD"] + stage.healthcheck()[1]
        self.healthcheck = test
        self.mounts = {}
        for volume in spec.get("volumes") or []:
            source, target = volume.split(":")[:2]
            self.mounts[target] = os.path.join(tmp, source)
            os.makedirs(self.mounts[target])
        self.log_path = os.path.join(tmp, name + ".log")
        # The container's environment: the image's ENV, then the service's;
        # none of this shell's RUNNEL_* (the entrypoint would map them).
        self.environment = {k: self.loopback(str(v)) for k, v in container_environment(spec, stage).items()}
        base = {k: v for k, v in os.environ.items() if not k.startswith("RUNNEL_")}
        self.env = dict(base, PATH=bin_dir + os.pathsep + os.environ["PATH"], **self.environment)
        self.proc = None

    def loopback(self, text):
        """The container's addresses and paths, as they are here."""
        for (host, port), local in self.ports.items():
            if host == self.name:
                text = text.replace("0.0.0.0:%d" % port, "127.0.0.1:%d" % local)
                text = text.replace("127.0.0.1:%d" % port, "127.0.0.1:%d" % local)
            text = text.replace("%s:%d" % (host, port), "127.0.0.1:%d" % local)
        for target, local in self.mounts.items():
            text = text.replace(target, local)
        return text

    def argv(self, command):
        if isinstance(command, str):
            command = shlex.split(command)
        return [self.loopback(compose_text(a, self.environment)) for a in command]

    def start(self):
        argv = self.argv(self.command)
        with open(self.log_path, "ab") as log:
            log.write(("=== %s: %s\n" % (self.name, " ".join(argv))).encode())
            log.flush()
            self.proc = subprocess.Popen(argv, cwd=REPO, env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, preexec_fn=set_parent_death_signal)

    def healthy(self):
        """The service's healthcheck, run as compose runs it (CMD or CMD-SHELL)."""
        test = self.healthcheck
        argv = self.argv(test[1:]) if test[0] == "CMD" else ["sh", "-c", self.loopback(compose_text(test[1], {}))]
        if self.proc.poll() is not None:
            raise AssertionError("%s exited with %d" % (self.name, self.proc.returncode))
        return subprocess.run(argv, cwd=REPO, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30).returncode == 0

    def wait_healthy(self):
        wait_until(self.healthy, BOUND, "%s's healthcheck" % self.name, poll=0.5)

    def stop(self):
        """`docker compose down`: SIGTERM, then (after its grace period) SIGKILL; -> exit code."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(STOP_BOUND)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
            raise AssertionError("%s did not stop within %.0f s of SIGTERM" % (self.name, STOP_BOUND))

    def dump(self):
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")[-20000:]
        except OSError:
            text = ""
        sys.stderr.write("----- %s log -----\n%s----- end of %s log -----\n" % (self.name, text, self.name))


def container_environment(spec, stage):
    """What `docker compose` gives the container: the image's ENV, then the service's environment."""
    env = stage.env()
    env.update({k: str(v) for k, v in (spec.get("environment") or {}).items()})
    return env


def published(spec):
    """The service's published container ports; each on the same host port, as the advertised addresses assume."""
    out = []
    for mapping in spec.get("ports") or []:
        host_ip, host_port, container_port = mapping.split(":")
        assert host_ip == "127.0.0.1" and host_port == container_port, "published as %s" % mapping
        out.append(int(container_port))
    return out


class Compose:
    def __init__(self, binary):
        with open(COMPOSE) as f:
            self.spec = yaml.safe_load(f)
        self.stages = dockerfile.stages()
        self.tmp = tempfile.mkdtemp(prefix="runnel-compose-")
        bin_dir = os.path.join(self.tmp, "bin")
        os.makedirs(bin_dir)
        os.symlink(os.path.abspath(binary), os.path.join(bin_dir, "runnel"))  # the image's /usr/local/bin/runnel
        services = self.spec["services"]
        assert sorted(services) == sorted(HOSTS + OTHER_IMAGES), "compose.yaml's services: %s" % sorted(services)
        stages = {}
        for name in HOSTS:
            build = services[name]["build"]
            assert (build["context"], build["dockerfile"]) == ("..", "docker/Dockerfile"), build
            stages[name] = self.stages[build["target"]]
            for source, src, dst in stages[name].copies():  # the image's scripts, where it installs them
                link = os.path.join(bin_dir, os.path.basename(dst))
                if source is None and src.startswith("docker/") and not os.path.exists(link):
                    os.symlink(os.path.join(REPO, src), link)
        ports = {}
        for name in HOSTS:
            spec = services[name]
            texts = [str(a) for a in spec.get("command") or []] + list(container_environment(spec, stages[name]).values())
            for port in listening_ports(texts):
                ports[(name, port)] = free_port()
        self.external = {}
        for name in HOSTS[1:]:
            (port,) = published(services[name])
            self.external[name] = ports[(name, port)]
        self.services = {name: Service(name, services[name], stages[name], self.tmp, ports, bin_dir)
                         for name in HOSTS}

    def up(self):
        etcd = self.services["etcd"]
        etcd.start()
        etcd.wait_healthy()
        for name in HOSTS[1:]:
            assert self.spec["services"][name]["depends_on"]["etcd"]["condition"] == "service_healthy"
            self.services[name].start()
        for name in HOSTS[1:]:
            self.services[name].wait_healthy()

    def bootstrap(self):
        """What a client on the host is given: the published EXTERNAL ports."""
        return ",".join("127.0.0.1:%d" % p for p in self.external.values())

    def down(self):
        codes = {name: self.services[name].stop() for name in HOSTS[1:]}
        codes["etcd"] = self.services["etcd"].stop()
        return codes

    def close(self, failed):
        for s in self.services.values():
            if s.proc is not None and s.proc.poll() is None:
                os.kill(s.proc.pid, signal.SIGKILL)
                s.proc.wait(10)
            if failed:
                s.dump()
        shutil.rmtree(self.tmp, ignore_errors=True)


def host_view(c):
    """`kcat -L -b 127.0.0.1:9092` from the host: the three brokers at their published addresses."""
    first = list(c.external.values())[0]

    def listed():
        out = subprocess.run(["kcat", "-L", "-b", "127.0.0.1:%d" % first, "-m", "10"], capture_output=True,
                             text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert out.returncode == 0, "kcat -L: %s" % out.stderr
        ports = sorted(int(p) for p in re.findall(r"broker \d+ at 127\.0\.0\.1:(\d+)", out.stdout))
        assert ports == sorted(c.external.values()), "kcat -L lists %s, the published ports are %s:\n%s" % (
            ports, sorted(c.external.values()), out.stdout)
        return True
    wait_until(listed, BOUND, "kcat -L to list the three brokers", poll=0.5)
    print("     kcat -L through EXTERNAL: 3 brokers at their published addresses", flush=True)


def defaults_and_records(c):
    """A topic created without a replication factor takes the file's 3 and
    min.insync.replicas 2; acks=all records go in and come back."""
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
    admin = AdminClient({"bootstrap.servers": c.bootstrap(), "broker.address.family": "v4"})
    admin.create_topics([NewTopic("compose-topic", num_partitions=3)])["compose-topic"].result(BOUND)
    md = admin.list_topics("compose-topic", timeout=BOUND).topics["compose-topic"]
    for p in md.partitions.values():
        assert len(p.replicas) == 3, "partition %d replicas %s" % (p.id, p.replicas)
    resource = ConfigResource(ConfigResource.Type.TOPIC, "compose-topic")
    configs = admin.describe_configs([resource])[resource].result(BOUND)
    assert configs["min.insync.replicas"].value == "2", configs["min.insync.replicas"].value
    records = [r for partition in range(3) for r in records_for(partition, 20, b"compose")]
    produced = produce(c.bootstrap(), "compose-topic", records, acks="all")
    for partition in range(3):
        got = consume(c.bootstrap(), "compose-topic", partition, len(produced[partition]))
        want = [(k, v) for p, k, v in records if p == partition]
        assert [(k, v) for _, k, v in got] == want, "partition %d read back %d of %d" % (
            partition, len(got), len(want))
    # A group's commit, so the dashboard's lag panel has its series.
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": c.bootstrap(), "group.id": "compose-group",
                         "broker.address.family": "v4", "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition("compose-topic", p, 10) for p in range(3)], asynchronous=False)
    finally:
        consumer.close()
    print("     replication factor 3, min.insync.replicas 2; 60 acks=all records read back; a group committed",
          flush=True)


def admin_address(c, name):
    """A broker's admin listener as other containers reach it: brokerN:PORT."""
    env = container_environment(c.spec["services"][name], c.services[name].stage)
    m = re.fullmatch(r"http://0\.0\.0\.0:(\d+)", env["RUNNEL_RUNNEL_ADMIN_LISTENERS"])
    assert m, "%s's admin listener: %s" % (name, env["RUNNEL_RUNNEL_ADMIN_LISTENERS"])
    return "%s:%s" % (c.spec["services"][name]["hostname"], m.group(1))


def mounted(spec, target):
    """The repository file or folder a service mounts at `target`."""
    for volume in spec.get("volumes") or []:
        source, dest = volume.split(":")[:2]
        if dest == target and source.startswith("./"):
            path = os.path.join(DOCKER, source[2:])
            assert os.path.exists(path), "%s mounts %s, which is not there" % (target, source)
            return path
    raise AssertionError("nothing of the repository is mounted at %s: %s" % (target, spec.get("volumes")))


def scrape(address):
    """{metric name: {label names}} of a /metrics answer (Prometheus's text format)."""
    with urllib.request.urlopen("http://%s/metrics" % address, timeout=10) as r:
        assert r.status == 200, r.status
        text = r.read().decode()
    metrics = {}
    for m in re.finditer(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ", text, re.M):
        metrics.setdefault(m.group(1), set()).update(re.findall(r'([a-zA-Z_]\w*)="', m.group(2) or ""))
    return metrics


def prometheus_targets(c):
    """prometheus.yml, as compose mounts it, scrapes /metrics of exactly the brokers' admin listeners."""
    spec = c.spec["services"]["prometheus"]
    config_flag = [a for a in spec["command"] if a.startswith("--config.file=")]
    assert len(config_flag) == 1, spec["command"]
    with open(mounted(spec, config_flag[0].split("=", 1)[1])) as f:
        config = yaml.safe_load(f)
    targets = []
    for job in config["scrape_configs"]:
        assert job.get("metrics_path", "/metrics") == "/metrics", job
        assert job.get("scheme", "http") == "http", job
        for static in job["static_configs"]:
            targets += static["targets"]
    want = [admin_address(c, name) for name in HOSTS[1:]]
    assert sorted(targets) == sorted(want), "prometheus.yml scrapes %s; the brokers' admin listeners are %s" % (
        targets, want)
    for name, target in zip(HOSTS[1:], want):
        assert scrape(c.services[name].loopback(target)), "%s's /metrics is empty" % target
    print("     scrapes %s, each answering /metrics" % ", ".join(want), flush=True)


_PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
                 "offset", "inf", "nan"}


def promql_metrics(expr):
    """The metric names a PromQL expression reads: identifiers that are not
    functions, keywords, label names of by/without/on/ignoring, or inside
    a selector's braces, a string or a range."""
    expr = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    expr = re.sub(r"\$\{?\w+\}?", "", expr)  # Grafana's variables ($__rate_interval, $topic)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expr):
        if m.start() and (expr[m.start() - 1].isdigit() or expr[m.start() - 1] == "."):
            continue  # a number's exponent or a duration's unit
        if re.match(r"\s*\(", expr[m.end():]) or m.group(0).lower() in _PROMQL_WORDS:
            continue
        names.add(m.group(0))
    return names


def promql_labels(expr):
    """The label names a PromQL expression groups or matches by."""
    expr = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    labels = set()
    for group in re.findall(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", expr):
        labels |= {w.strip() for w in group.split(",") if w.strip()}
    for selector in re.findall(r"\{([^}]*)\}", expr):
        labels |= set(re.findall(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)", selector))
    return labels


def dashboard_queries(d):
    """(where, PromQL, legend) of every panel target and template variable of a dashboard."""
    out = []
    for panel in d["panels"]:
        for inner in [panel] + panel.get("panels", []):
            for t in inner.get("targets", []):
                out.append(("panel %r" % inner["title"], t["expr"], t.get("legendFormat", "")))
    for v in d["templating"]["list"]:
        query = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", query)
        out.append(("variable %r" % v["name"], m.group(1), "{{%s}}" % m.group(2)) if m else
                   ("variable %r" % v["name"], query, ""))
    return out


def grafana_dashboard(c):
    """Grafana's provisioning names compose's Prometheus and the mounted
    dashboard; the dashboard is dashboard.py's output; every metric it
    queries is one the brokers export now that records went through, and
    every label it groups, matches or names in a legend is one of that
    metric's (or instance and job, which Prometheus adds)."""
    spec = c.spec["services"]["grafana"]
    provisioning = mounted(spec, "/etc/grafana/provisioning")
    with open(os.path.join(provisioning, "datasources", "prometheus.yml")) as f:
        (source,) = yaml.safe_load(f)["datasources"]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090", source
    with open(os.path.join(provisioning, "dashboards", "runnel.yml")) as f:
        (provider,) = yaml.safe_load(f)["providers"]
    dashboards = mounted(spec, provider["options"]["path"])
    sys.path.insert(0, os.path.join(DOCKER, "grafana"))
    import dashboard as generator
    with open(os.path.join(dashboards, "runnel.json")) as f:
        text = f.read()
    assert text == generator.text(), "dashboards/runnel.json is not what docker/grafana/dashboard.py writes: run it"
    d = json.loads(text)
    exported = dict(PROMETHEUS_SERIES)
    for name in HOSTS[1:]:
        for metric, labels in scrape(c.services[name].loopback(admin_address(c, name))).items():
            exported.setdefault(metric, set()).update(labels)
    queried, unknown = set(), []
    for where, expr, legend in dashboard_queries(d):
        names = promql_metrics(expr)
        assert names, "%s queries no metric: %s" % (where, expr)
        for name in names - set(exported):
            unknown.append("%s: metric %s" % (where, name))
        known = TARGET_LABELS.union(*(exported.get(n, set()) for n in names))
        for label in (promql_labels(expr) | set(re.findall(r"\{\{\s*(\w+)\s*\}\}", legend))) - known:
            unknown.append("%s: label %s of %s" % (where, label, " ".join(sorted(names))))
        queried |= names
    assert not unknown, "the dashboard queries what no broker exports:\n  " + "\n  ".join(unknown)
    uids = {json.dumps(p["datasource"], sort_keys=True) for p in d["panels"] if "datasource" in p}
    assert uids == {json.dumps({"type": "prometheus", "uid": source["uid"]}, sort_keys=True)}, uids
    print("     %d panels, %d metrics queried, each exported with the labels used: %s" % (
        sum(1 for p in d["panels"] if p["type"] != "row"), len(queried), " ".join(sorted(queried))), flush=True)


def main():
    binary = runnel_binary()
    c = Compose(binary)
    failed = True
    try:
        c.up()
        print("     etcd healthy, then 3 brokers healthy (each /v1/status/ready: registered)", flush=True)
        code = run_tests([
            ("the host's view through EXTERNAL", lambda: host_view(c)),
            ("the file's topic defaults, and acks=all records through it", lambda: defaults_and_records(c)),
            ("Prometheus scrapes every broker's admin listener", lambda: prometheus_targets(c)),
            ("Grafana's dashboard queries only exported metrics", lambda: grafana_dashboard(c)),
        ])
        codes = c.down()
        # A broker's graceful stop exits 0; etcd 3.4 ends by the signal.
        assert all(codes[name] == 0 for name in HOSTS[1:]) and codes["etcd"] in (0, -signal.SIGTERM), (
            "exit codes after SIGTERM: %s" % codes)
        print("     down: every broker exited 0 after SIGTERM, then etcd", flush=True)
        failed = code != 0
        return code
    finally:
        c.close(failed)


if __name__ == "__main__":
    sys.exit(main())
