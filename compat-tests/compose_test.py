"""docker/compose.yaml run outside a container (label "cluster"): this
machine has a docker client and no engine, so the file is checked the way
its containers would run it. Each service's `command`, `environment`,
`healthcheck` and volumes are read from the file (PyYAML) and run as
processes here, from the repository root (the image's WORKDIR is a copy of
it), with `runnel` on PATH as the image installs it. What a container gets
from its own network namespace is mapped onto loopback, and nothing else
is changed:

  - a service's host name (etcd, broker1..3) is 127.0.0.1;
  - each port a service listens on (etcd's 2379 and 2380, a broker's
    INTERNAL 19092 and the EXTERNAL port published on the host) is a free
    port of its own: in compose every container has its own 19092;
  - each volume's mount point is a fresh directory.

Then, as the file's header says a user does: etcd comes up and passes its
healthcheck before the brokers start (depends_on: service_healthy); every
broker passes its healthcheck (kcat sees 3 brokers); the host's view through
EXTERNAL (`kcat -L -b 127.0.0.1:9092`) lists the three brokers at their
published addresses; a topic takes the file's defaults (replication factor
3, min.insync.replicas 2), acks=all records go in and come back out; and
`docker compose down` (SIGTERM to each container) stops every broker.

  /usr/bin/python3 compat-tests/compose_test.py build/debug/runnel
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

from cluster_harness import consume, create_topic, free_port, produce, records_for, run_tests, runnel_binary, wait_until
from runnel_harness import set_parent_death_signal

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMPOSE = os.path.join(REPO, "docker", "compose.yaml")
BOUND = 60.0  # seconds: CI machines are loaded
STOP_BOUND = 60.0
HOSTS = ("etcd", "broker1", "broker2", "broker3")


def compose_text(value, environment):
    """A command string as the container's shell gets it: compose turns $$
    into $, and the service's environment fills ${NAME}."""
    text = value.replace("$$", "$")
    return re.sub(r"\$\{(\w+)\}", lambda m: str(environment[m.group(1)]), text)


class Service:
    """One compose service as a process on loopback (see the docstring)."""

    def __init__(self, name, spec, tmp, ports, bin_dir):
        self.name, self.spec, self.ports = name, spec, ports
        self.environment = {k: str(v) for k, v in (spec.get("environment") or {}).items()}
        self.mounts = {}
        for volume in spec.get("volumes") or []:
            source, target = volume.split(":")[:2]
            self.mounts[target] = os.path.join(tmp, source)
            os.makedirs(self.mounts[target])
        self.log_path = os.path.join(tmp, name + ".log")
        self.env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"], **self.environment)
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
        argv = self.argv(self.spec["command"])
        with open(self.log_path, "ab") as log:
            log.write(("=== %s: %s\n" % (self.name, " ".join(argv))).encode())
            log.flush()
            self.proc = subprocess.Popen(argv, cwd=REPO, env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, preexec_fn=set_parent_death_signal)

    def healthy(self):
        """The service's healthcheck, run as compose runs it (CMD or CMD-SHELL)."""
        test = self.spec["healthcheck"]["test"]
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


class Compose:
    def __init__(self, binary):
        with open(COMPOSE) as f:
            self.spec = yaml.safe_load(f)
        self.tmp = tempfile.mkdtemp(prefix="runnel-compose-")
        bin_dir = os.path.join(self.tmp, "bin")
        os.makedirs(bin_dir)
        os.symlink(os.path.abspath(binary), os.path.join(bin_dir, "runnel"))  # the image's /usr/local/bin/runnel
        services = self.spec["services"]
        assert sorted(services) == sorted(HOSTS), "compose.yaml's services: %s" % sorted(services)
        ports = {("etcd", 2379): free_port(), ("etcd", 2380): free_port()}
        for name in HOSTS[1:]:
            ports[(name, 19092)] = free_port()
            external = int(services[name]["environment"]["EXTERNAL_PORT"])
            ports[(name, external)] = free_port()
        self.external = {name: ports[(name, int(services[name]["environment"]["EXTERNAL_PORT"]))]
                         for name in HOSTS[1:]}
        self.services = {name: Service(name, services[name], self.tmp, ports, bin_dir) for name in HOSTS}

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
    out = subprocess.run(["kcat", "-L", "-b", "127.0.0.1:%d" % first, "-m", "10"], capture_output=True, text=True,
                         timeout=30, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, "kcat -L: %s" % out.stderr
    listed = sorted(int(p) for p in re.findall(r"broker \d+ at 127\.0\.0\.1:(\d+)", out.stdout))
    assert listed == sorted(c.external.values()), "kcat -L lists %s, the published ports are %s:\n%s" % (
        listed, sorted(c.external.values()), out.stdout)
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
    print("     replication factor 3, min.insync.replicas 2; 60 acks=all records read back", flush=True)


def main():
    binary = runnel_binary()
    c = Compose(binary)
    failed = True
    try:
        c.up()
        print("     etcd healthy, then 3 brokers healthy (kcat sees 3 brokers on each INTERNAL listener)", flush=True)
        code = run_tests([
            ("the host's view through EXTERNAL", lambda: host_view(c)),
            ("the file's topic defaults, and acks=all records through it", lambda: defaults_and_records(c)),
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
