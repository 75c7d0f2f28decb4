"""Starts and stops a real `runnel serve` process for the compatibility tests.

Contract (runnel_process.h is the same for C++ tests):
  - listens on 127.0.0.1, port 0 on first start (the kernel picks), with a
    fresh temporary log dir, plus any --override key=value the test passes;
  - the port comes from the log line "listening on PLAINTEXT://127.0.0.1:<port>";
  - start() returns once a Metadata request is answered (bounded wait);
  - stop() sends SIGTERM to the pid and waits (bounded), then SIGKILL;
    kill9() is the crash; restart() starts again on the same dir and port;
  - stderr goes to <tmp>/runnel.log (appended across restarts) and is
    printed when a test fails inside `with Runnel(...)`.

Use with /usr/bin/python3 (Debian's, which has confluent-kafka and kafka-python).
"""

import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

_LISTENING = re.compile(rb"listening on PLAINTEXT://127\.0\.0\.1:(\d+)")
_ANY_LISTENER = re.compile(r"listening on ([A-Za-z0-9_]+)://127\.0\.0\.1:(\d+) \(")
_ADMIN_LISTENING = re.compile(r"admin listening on (https?)://127\.0\.0\.1:(\d+)")


class RunnelError(RuntimeError):
    pass


def runnel_binary():
    """The binary named by argv[1] (how ctest passes $<TARGET_FILE:runnel>) or $RUNNEL."""
    if len(sys.argv) > 1:
        return sys.argv[1]
    if os.environ.get("RUNNEL"):
        return os.environ["RUNNEL"]
    raise RunnelError("usage: %s <path to runnel>" % sys.argv[0])


def metadata_request_bytes(correlation_id=1):
    """Metadata v1 for all topics (topics = null): request header v1, no tags."""
    client_id = b"runnel-harness"
    body = struct.pack(">hhih", 3, 1, correlation_id, len(client_id)) + client_id
    body += struct.pack(">i", -1)
    return struct.pack(">i", len(body)) + body


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def recv_frame(sock):
    (size,) = struct.unpack(">i", recv_exact(sock, 4))
    return recv_exact(sock, size)


def set_parent_death_signal(sig=signal.SIGKILL):
    """prctl(PR_SET_PDEATHSIG, sig) in a child between fork and exec: the
    child gets `sig` when the thread that forked it exits."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


class BrokerProcess:
    """The lifecycle a test harness needs from any broker process: stop by
    pid (SIGTERM, then SIGKILL), the crash (SIGKILL), restart on the same
    dir and port, the log printed when a test fails inside `with`.
    Subclasses start the process and say when it is ready (_ready)."""

    name = "broker"
    error = RuntimeError
    log_name = "broker.log"
    stop_timeout = 30.0
    dump_limit = 200_000
    ready_poll = 0.05
    clean_exit_required = True  # a graceful stop must exit 0

    def __init__(self, ready_timeout, keep_dir, prefix):
        self.ready_timeout = ready_timeout
        self.keep_dir = keep_dir
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.log_dir = os.path.join(self.tmp, "data")
        self.log_path = os.path.join(self.tmp, self.log_name)
        self.port = 0
        self.proc = None

    def _ready(self, frame):
        """None when a Metadata v1 response frame shows the broker ready, else why not."""
        return None if struct.unpack(">i", frame[:4])[0] == 7 else "wrong correlation id"

    def _wait_for_metadata(self, deadline):
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail("%s exited with %d during startup" % (self.name, self.proc.returncode))
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                    s.settimeout(5)
                    s.sendall(metadata_request_bytes(7))
                    last = self._ready(recv_frame(s))
                    if last is None:
                        return
            except OSError as e:
                last = e
            time.sleep(self.ready_poll)
        self._fail("%s did not answer Metadata in %.0f s (%s)" % (self.name, self.ready_timeout, last))

    def stop(self, timeout=None):
        """Graceful stop (SIGTERM); returns the exit code. SIGKILL after `timeout`."""
        timeout = self.stop_timeout if timeout is None else timeout
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(10)
                self._dump()
                raise self.error("%s did not stop within %.0f s of SIGTERM; killed" % (self.name, timeout))
        return proc.returncode

    def kill9(self):
        """The crash: SIGKILL, no flush, no clean-shutdown marker."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def restart(self, graceful=True):
        """Stops (SIGTERM, or SIGKILL when not graceful) and starts on the same dir and port."""
        if graceful:
            rc = self.stop()
            if self.clean_exit_required and rc != 0:
                self._fail("graceful stop exited with %s" % rc)
        else:
            self.kill9()
        return self.start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def close(self):
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.stop()
        finally:
            if not self.keep_dir:
                shutil.rmtree(self.tmp, ignore_errors=True)

    @property
    def bootstrap(self):
        return "127.0.0.1:%d" % self.port

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _dump(self):
        text = self.log_text()
        if len(text) > self.dump_limit:
            text = "... (%d bytes cut)\n" % (len(text) - self.dump_limit) + text[-self.dump_limit:]
        sys.stderr.write("----- %s log (%s) -----\n%s----- end of %s log -----\n" % (
            self.name, self.log_path, text, self.name))
        sys.stderr.flush()

    def _fail(self, message):
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None
        self._dump()
        raise self.error(message)

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            if self.proc is not None and self.proc.poll() is None:
                self.kill9()
            self._dump()
        self.close()
        return False


class Runnel(BrokerProcess):
    name = "runnel"
    error = RunnelError
    log_name = "runnel.log"

    # SIGKILLed when the thread that started it exits (the test died): the
    # cluster tests set it; PR_SET_PDEATHSIG follows the starting *thread*.
    die_with_parent = False

    def __init__(self, binary=None, overrides=None, keep_dir=False, ready_timeout=30.0, max_open_files=None,
                 prefix="runnel-compat-"):
        super().__init__(ready_timeout, keep_dir, prefix)
        self.binary = binary or runnel_binary()
        self.overrides = dict(overrides or {})
        self.max_open_files = max_open_files  # `ulimit -n` of the broker process
        self.env = {}  # added to the broker process's environment

    def start(self):
        if self.proc is not None:
            raise RunnelError("runnel is already running (pid %d)" % self.proc.pid)
        args = [self.binary, "serve"]
        props = {
            "node.id": "1",
            "listeners": "PLAINTEXT://127.0.0.1:%d" % self.port,
            "log.dirs": self.log_dir,
        }
        props.update(self.overrides)
        for k, v in props.items():
            args += ["--override", "%s=%s" % (k, v)]
        with open(self.log_path, "ab") as log:
            log.write(b"=== runnel start: %s\n" % " ".join(args).encode())
            # On disk before the child writes: else its first lines can land
            # before the marker, below `offset`, and the port is never seen.
            log.flush()
            offset = log.tell()
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         env=dict(os.environ, **self.env) if self.env else None,
                                         preexec_fn=self._child_setup if self._needs_child_setup() else None)
        deadline = time.monotonic() + self.ready_timeout
        port = self._wait_for_port(offset, deadline)
        self.port = port
        self._wait_for_metadata(deadline)
        return self

    def listener_ports(self):
        """{listener name: port} of the last start, from its "listening on
        NAME://127.0.0.1:PORT (PROTOCOL)" lines (a listener on port 0 gets
        its port from the kernel)."""
        text = self.log_text()
        last = text.rfind("=== runnel start:")
        return {m.group(1): int(m.group(2))
                for m in _ANY_LISTENER.finditer(text[last if last >= 0 else 0:])}

    def admin_port(self, scheme="http"):
        """The port of the last start's admin listener of `scheme`
        (runnel.admin.listeners=http://127.0.0.1:0 or https://...), from its
        "admin listening on http://127.0.0.1:PORT" line, or None."""
        text = self.log_text()
        found = [int(port) for s, port in _ADMIN_LISTENING.findall(text[max(text.rfind("=== runnel start:"), 0):])
                 if s == scheme]
        return found[-1] if found else None

    def _needs_child_setup(self):
        return bool(self.max_open_files) or self.die_with_parent

    def _child_setup(self):
        """In the child before exec: `ulimit -n`, and the parent-death signal."""
        if self.max_open_files:
            import resource
            resource.setrlimit(resource.RLIMIT_NOFILE, (self.max_open_files, self.max_open_files))
        if self.die_with_parent:
            set_parent_death_signal()

    def _wait_for_port(self, offset, deadline):
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                m = _LISTENING.search(f.read())
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                self._fail("runnel exited with %d before listening" % self.proc.returncode)
            time.sleep(0.02)
        self._fail("runnel did not log its listening port in %.0f s" % self.ready_timeout)


def preloaded(library, **env):
    """A broker environment (Runnel.env) that LD_PRELOADs `library` (a test
    shim: add_preloaded_cluster_test in CMakeLists.txt) with `env` for it. The
    broker may be an ASan build, whose runtime wants to come first among the
    libraries; the shim is first."""
    asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
    return dict(env, LD_PRELOAD=library, ASAN_OPTIONS=asan)


def run_tests(tests, broker=None):
    """Runs (name, fn) pairs, printing one line each and then 'N passed, N failed'.

    On a failure the broker's stderr is printed too. Returns the process exit
    code: `sys.exit(run_tests(...))` once the broker is closed.
    """
    import traceback

    passed = failed = 0
    for name, fn in tests:
        start = time.monotonic()
        try:
            fn()
        except Exception:
            failed += 1
            traceback.print_exc()
            print("FAIL %s (%.1f s)" % (name, time.monotonic() - start), flush=True)
        else:
            passed += 1
            print("ok   %s (%.1f s)" % (name, time.monotonic() - start), flush=True)
    if failed and broker is not None:
        broker._dump()
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 1 if failed else 0
