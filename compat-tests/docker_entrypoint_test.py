"""The image's parts run outside a container (this machine has no container
engine): docker/Dockerfile's runtime stage read as the builder reads it
(compat-tests/dockerfile.py), its entrypoint and health check run here as
the image installs them, on loopback, against the real broker binary.

  - the build stage runs exactly scripts/test's release build (scripts/setup,
    the release preset, `runnel apis`) and the runtime stage copies that binary;
  - the runtime stage installs the Debian package of every shared library the
    binary links (ldd, dpkg -S), runs as a fixed non-root uid, keeps data in
    its VOLUME, exposes 9092 and the admin port;
  - the entrypoint maps RUNNEL_* to --override as apache/kafka's image maps
    KAFKA_* (`_` -> `.`, `__` -> `_`, `___` -> `-`), derives listeners from
    advertised.listeners, leaves RUNNEL_BROKERS (the CLI's) alone, passes
    flag arguments on to `runnel serve` and runs other arguments instead:
    checked on the exact argv;
  - with the image's ENV and a RUNNEL_* environment, the entrypoint starts
    the real broker: it answers on the mapped listener, writes its logs in
    the mapped log dir, takes num.partitions from its argument over the
    variable (`docker run IMAGE --override ...`), and its admin
    listener turns ready; the HEALTHCHECK command passes then, fails on a
    503, and fails once the broker, stopped by pid, is down.

  /usr/bin/python3 compat-tests/docker_entrypoint_test.py build/debug/runnel
"""

import http.server
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.request

import dockerfile
from cluster_harness import free_port, run_tests, runnel_binary, wait_until
from runnel_harness import set_parent_death_signal

REPO = dockerfile.REPO
STAGES = dockerfile.stages()
RUNTIME = STAGES["runtime"]
BOUND = 60.0  # seconds: CI machines are loaded


def ci_release_commands():
    """scripts/test's setup and release-build commands, variables filled in and output redirections dropped."""
    with open(os.path.join(REPO, "scripts", "test")) as f:
        lines = [l.strip() for l in f if l.strip() and not l.lstrip().startswith("#")]
    variables = dict(m.groups() for m in (re.match(r"^(\w+)=(\S+)$", l) for l in lines) if m)
    commands = []
    for line in lines:
        if line == "scripts/setup" or "--preset release" in line or line.startswith("build/release/"):
            for name, value in variables.items():
                line = line.replace('"$%s"' % name, '"%s"' % value)
            commands.append(re.sub(r"\s*>\s*/dev/null", "", line))
    return commands


def build_stage_is_ci():
    ci = ci_release_commands()
    assert len(ci) == 4 and ci[0] == "scripts/setup", "scripts/test's release build: %s" % ci
    build = STAGES["build"]
    assert build.base == "debian:12", build.base
    assert build.run_commands() == ci, "Dockerfile build stage runs %s; scripts/test runs %s" % (
        build.run_commands(), ci)
    workdir = build.last("WORKDIR")
    binary = [src for stage, src, dst in RUNTIME.copies() if stage == "build" and dst == "/usr/local/bin/runnel"]
    assert binary == [workdir + "/build/release/runnel"], "runtime copies %s from the build stage" % binary
    print("     build stage: %s" % " && ".join(ci), flush=True)


def runtime_packages():
    words = " ".join(c for c in RUNTIME.run_commands() if c.startswith("apt-get install")).split()
    return {w for w in words[2:] if not w.startswith("-")}


# Linked by the debug preset's binary only: the sanitizers' runtimes, and
# Boost.Container (Boost.JSON's pmr containers, all inlined at -O2).
DEBUG_ONLY = re.compile(r"lib(asan|ubsan)\d+$|libboost-container")


def runtime_stage_has_the_libraries(binary):
    """Every library the binary links comes from a package the runtime stage
    installs. The image's binary is the release one: checked when it is built
    (build/release/runnel), else the one given, less what only a debug build links."""
    assert RUNTIME.base == "debian:12-slim", RUNTIME.base
    release = os.path.join(REPO, "build", "release", "runnel")
    debug = not os.path.exists(release)
    binary = binary if debug else release
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True, timeout=30).stdout
    libraries = re.findall(r"=> (/\S+)", out)
    assert libraries, out
    packages, needed = runtime_packages(), {}
    for library in libraries:
        owner = subprocess.run(["dpkg", "-S", os.path.realpath(library)], capture_output=True, text=True,
                               timeout=30)
        if owner.returncode != 0:  # merged /usr: the package lists the /lib path
            owner = subprocess.run(["dpkg", "-S", "/lib/" + os.path.realpath(library).split("/lib/", 1)[1]],
                                   capture_output=True, text=True, timeout=30)
        assert owner.returncode == 0, "no package owns %s" % library
        package = owner.stdout.split(":")[0]
        if debug and DEBUG_ONLY.match(package):
            continue
        needed[package] = library
    missing = {p: l for p, l in needed.items() if p not in packages}
    assert not missing, "the runtime stage does not install %s" % missing
    print("     %s: %d libraries, from %s" % (os.path.relpath(binary, REPO) if binary.startswith(REPO) else binary,
                                          len(needed), " ".join(sorted(needed))), flush=True)


def runtime_stage_user_volume_ports():
    run = " ".join(RUNTIME.run_commands())
    uid = re.search(r"useradd .*--uid (\d+)", run)
    assert uid and int(uid.group(1)) != 0, "the runtime stage creates no non-root user: %s" % run
    user = RUNTIME.last("USER").split(":")[0]
    assert re.search(r"useradd .* %s$|useradd .* %s\b" % (user, user), run), "USER %s is not the one created" % user
    volume = RUNTIME.last("VOLUME")
    env = RUNTIME.env()
    assert env["RUNNEL_LOG_DIRS"].startswith(volume + "/"), "log.dirs %s is outside the VOLUME %s" % (
        env["RUNNEL_LOG_DIRS"], volume)
    assert re.search(r"install -d -o %s .*%s" % (user, re.escape(volume)), run), "%s is not %s's" % (volume, user)
    admin_port = re.search(r":(\d+)$", env["RUNNEL_RUNNEL_ADMIN_LISTENERS"]).group(1)
    assert sorted(RUNTIME.last("EXPOSE").split()) == sorted(["9092", admin_port]), RUNTIME.last("EXPOSE")
    workdir = RUNTIME.last("WORKDIR")
    assert RUNTIME.installed("config/server.properties") == workdir + "/config/server.properties", (
        "the entrypoint's relative config/server.properties is not where the image has it")
    print("     uid %s (%s), VOLUME %s, log.dirs %s, EXPOSE %s" % (
        uid.group(1), user, volume, env["RUNNEL_LOG_DIRS"], RUNTIME.last("EXPOSE")), flush=True)


class Image:
    """The runtime stage's files as it installs them: a PATH directory with
    its entrypoint, health check and `runnel` (the binary under test), and
    the repository root as its WORKDIR (config/server.properties)."""

    def __init__(self, binary):
        self.tmp = tempfile.mkdtemp(prefix="runnel-entrypoint-")
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        for script in ("docker/entrypoint.sh", "docker/healthcheck.sh"):
            os.symlink(os.path.join(REPO, script), os.path.join(self.bin, os.path.basename(RUNTIME.installed(script))))
        os.symlink(os.path.abspath(binary), os.path.join(self.bin, "runnel"))
        self.entrypoint = RUNTIME.entrypoint()
        self.health = RUNTIME.healthcheck()[1]

    def env(self, **variables):
        """The container's environment: the image's ENV, then `docker run -e`."""
        env = {"PATH": self.bin + os.pathsep + "/usr/bin:/bin", "HOME": self.tmp}
        env.update(RUNTIME.env())
        env.update(variables)
        return env

    def healthy(self, env):
        return subprocess.run(self.health, env=env, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30).returncode == 0

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def recorded_argv(image, env, args=()):
    """What the entrypoint execs, with `runnel` replaced by a recorder of its argv."""
    rec_bin = os.path.join(image.tmp, "recorder")
    os.makedirs(rec_bin, exist_ok=True)
    out = os.path.join(image.tmp, "argv")
    with open(os.path.join(rec_bin, "runnel"), "w") as f:
        f.write("#!/bin/bash\nprintf '%%s\\0' \"$@\" > %s\n" % shlex.quote(out))
    os.chmod(os.path.join(rec_bin, "runnel"), 0o755)
    env = dict(env, PATH=rec_bin + os.pathsep + env["PATH"])
    subprocess.run(image.entrypoint + list(args), env=env, cwd=REPO, check=True, timeout=30,
                   stdin=subprocess.DEVNULL)
    with open(out, "rb") as f:
        return f.read().decode().split("\0")[:-1]


def overrides(argv):
    assert argv[:2] == ["serve", "config/server.properties"], argv
    pairs = argv[2:]
    assert all(flag == "--override" for flag in pairs[0::2]), argv
    return dict(p.split("=", 1) for p in pairs[1::2])


def mapping_rules(image):
    got = overrides(recorded_argv(image, image.env(
        RUNNEL_ADVERTISED_LISTENERS="INTERNAL://broker1:19092,EXTERNAL://127.0.0.1:9092,V6://[::1]:9093",
        RUNNEL_RUNNEL_ETCD_ENDPOINTS="http://etcd:2379",
        RUNNEL_LISTENER_NAME_INTERNAL_SASL__ENABLED__MECHANISMS="SCRAM-SHA-256",
        RUNNEL_SOME___DASHED__KEY="a value with spaces = and an equals sign",
        RUNNEL_BROKERS="127.0.0.1:9092")))
    want = {
        "log.dirs": "/var/lib/runnel/data",
        "runnel.admin.listeners": "http://0.0.0.0:9644",
        "advertised.listeners": "INTERNAL://broker1:19092,EXTERNAL://127.0.0.1:9092,V6://[::1]:9093",
        "listeners": "INTERNAL://0.0.0.0:19092,EXTERNAL://0.0.0.0:9092,V6://0.0.0.0:9093",
        "runnel.etcd.endpoints": "http://etcd:2379",
        "listener.name.internal.sasl_enabled_mechanisms": "SCRAM-SHA-256",
        "some-dashed_key": "a value with spaces = and an equals sign",
    }
    assert got == want, "entrypoint overrides:\n  %s\nwant\n  %s" % (got, want)
    # Neither listeners nor advertised.listeners: every interface, port 9092.
    got = overrides(recorded_argv(image, image.env()))
    assert got["listeners"] == "PLAINTEXT://0.0.0.0:9092" and "advertised.listeners" not in got, got
    # listeners given: kept as given.
    got = overrides(recorded_argv(image, image.env(RUNNEL_LISTENERS="PLAINTEXT://127.0.0.1:1234",
                                                   RUNNEL_ADVERTISED_LISTENERS="PLAINTEXT://h:1234")))
    assert got["listeners"] == "PLAINTEXT://127.0.0.1:1234", got
    # Arguments: flags go to `runnel serve` after the overrides; anything else runs instead of the broker.
    argv = recorded_argv(image, image.env(), ["--override", "num.partitions=9"])
    assert argv[-2:] == ["--override", "num.partitions=9"] and overrides(argv)["log.dirs"], argv
    assert recorded_argv(image, image.env(), ["runnel", "apis"]) == ["apis"]
    print("     _ . __ _ ___ -, runnel.* keys, listeners from advertised.listeners, RUNNEL_BROKERS left out", flush=True)


def real_broker(image):
    tmp = os.path.join(image.tmp, "run")
    os.makedirs(tmp)
    data = os.path.join(tmp, "data")
    port, admin = free_port(), free_port()
    env = image.env(RUNNEL_LOG_DIRS=data,
                    RUNNEL_LISTENERS="PLAINTEXT://127.0.0.1:%d" % port,
                    RUNNEL_ADVERTISED_LISTENERS="PLAINTEXT://127.0.0.1:%d" % port,
                    RUNNEL_RUNNEL_ADMIN_LISTENERS="http://127.0.0.1:%d" % admin,
                    RUNNEL_NUM_PARTITIONS="2",
                    RUNNEL_NODE_ID="7")
    log_path = os.path.join(tmp, "broker.log")
    with open(log_path, "wb") as log:  # `docker run IMAGE --override ...`: the argument wins over the variable
        proc = subprocess.Popen(image.entrypoint + ["--override", "num.partitions=3"], env=env, cwd=REPO, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, preexec_fn=set_parent_death_signal)
    try:
        wait_until(lambda: proc.poll() is None and image.healthy(env), BOUND, "the HEALTHCHECK to pass", poll=0.2)
        with urllib.request.urlopen("http://127.0.0.1:%d/v1/status/ready" % admin, timeout=10) as r:
            assert r.status == 200, r.status

        from confluent_kafka.admin import AdminClient, NewTopic
        client = AdminClient({"bootstrap.servers": "127.0.0.1:%d" % port, "broker.address.family": "v4"})
        md = client.list_topics(timeout=BOUND)
        assert [b.id for b in md.brokers.values()] == [7], "node.id: %s" % md.brokers
        assert [(b.host, b.port) for b in md.brokers.values()] == [("127.0.0.1", port)], md.brokers
        client.create_topics([NewTopic("entrypoint-topic", num_partitions=-1)])["entrypoint-topic"].result(BOUND)
        parts = client.list_topics("entrypoint-topic", timeout=BOUND).topics["entrypoint-topic"].partitions
        assert len(parts) == 3, "num.partitions: %d partitions" % len(parts)
        for p in range(3):
            assert os.path.isdir(os.path.join(data, "entrypoint-topic-%d" % p)), os.listdir(data)
        assert os.path.isfile(os.path.join(data, "meta.properties")), os.listdir(data)
        print("     node 7 on the mapped listener, num.partitions 3 (the argument over the variable's 2), "
              "logs in the mapped dir; "
              "healthy once ready", flush=True)

        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(BOUND) == 0, "exit code %d after SIGTERM" % proc.returncode
        assert not image.healthy(env), "the HEALTHCHECK passes with the broker down"
        print("     stopped by pid (exit 0): the HEALTHCHECK fails", flush=True)
    except BaseException:
        with open(log_path, "rb") as f:
            sys.stderr.write(f.read().decode("utf-8", "replace")[-20000:])
        raise
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def unready_is_unhealthy(image):
    """An admin listener answering 503 (not ready) fails the HEALTHCHECK; 200 passes it."""
    status = {"code": 503}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(status["code"] if self.path == "/v1/status/ready" else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = image.env(RUNNEL_RUNNEL_ADMIN_LISTENERS="http://127.0.0.1:%d" % server.server_port)
        assert not image.healthy(env), "healthy on a 503"
        status["code"] = 200
        assert image.healthy(env), "unhealthy on a 200"
        # The image's own wildcard address is reached on loopback.
        env = image.env(RUNNEL_RUNNEL_ADMIN_LISTENERS="http://0.0.0.0:%d" % server.server_port)
        assert image.healthy(env), "0.0.0.0 not reached on loopback"
    finally:
        server.shutdown()
        server.server_close()
    print("     503 unhealthy, 200 healthy, 0.0.0.0 checked on 127.0.0.1", flush=True)


def main():
    binary = runnel_binary()
    image = Image(binary)
    try:
        return run_tests([
            ("the build stage runs scripts/test's release build", build_stage_is_ci),
            ("the runtime stage installs the binary's libraries", lambda: runtime_stage_has_the_libraries(binary)),
            ("non-root user, VOLUME, ports", runtime_stage_user_volume_ports),
            ("RUNNEL_* to --override, as apache/kafka's image maps KAFKA_*", lambda: mapping_rules(image)),
            ("the HEALTHCHECK reads the readiness status", lambda: unready_is_unhealthy(image)),
            ("the entrypoint and HEALTHCHECK against the real broker", lambda: real_broker(image)),
        ])
    finally:
        image.close()


if __name__ == "__main__":
    sys.exit(main())
