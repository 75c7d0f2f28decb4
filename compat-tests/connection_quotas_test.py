"""Kafka's connection quotas (issue 18): max.connections, per listener and
broker-wide with the inter-broker listener exempt, max.connections.per.ip
and its overrides, max.connection.creation.rate, the startup check Kafka
makes, and a dynamic update through IncrementalAlterConfigs.

Clients bind 127.0.0.2 as well as 127.0.0.1 as their source address (all of
127/8 is loopback on Linux) so one machine has two client addresses.

A limit that makes a connection wait is checked as "not answered within a
short window, then answered once a slot is free" (each wait bounded); the
creation rate only as a lower bound on how long the connections took,
which a loaded machine can only lengthen.

usage: /usr/bin/python3 connection_quotas_test.py <runnel binary>
"""

import socket
import struct
import subprocess
import sys
import tempfile
import time

import kafka_wire as w
from runnel_harness import Runnel, recv_exact, run_tests, runnel_binary

BROKER_RESOURCE = 4
SET = 0
SERVED_BOUND = 15.0  # seconds for a connection the limits allow to be answered
WAITING_WINDOW = 1.5  # seconds a connection past a limit must go unanswered


def connect(port, source="127.0.0.1"):
    return socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))


def answered(sock, corr, timeout):
    """True when ApiVersions on `sock` is answered within `timeout` s; False
    when it is not (still waiting) or the broker closed the connection."""
    sock.settimeout(timeout)
    try:
        sock.sendall(w.api_versions_v0(corr))
        (size,) = struct.unpack(">i", recv_exact(sock, 4))
        recv_exact(sock, size)
        return True
    except (socket.timeout, ConnectionError, OSError):
        return False


def closed_by_broker(sock, timeout=SERVED_BOUND):
    """True when the broker closes `sock` without answering within `timeout`."""
    sock.settimeout(timeout)
    try:
        sock.sendall(w.api_versions_v0(99))
        return sock.recv(4) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def served(port, source="127.0.0.1"):
    """A connection from `source` that the broker answered. Retried until
    SERVED_BOUND: a connection just closed (the harness's readiness probe,
    a test's own) may still hold its slot for a moment on the broker."""
    deadline = time.monotonic() + SERVED_BOUND
    corr = 1
    while True:
        s = connect(port, source)
        if answered(s, corr, timeout=5.0):
            return s
        s.close()
        corr += 1
        assert time.monotonic() < deadline, "no connection from %s answered in %.0f s" % (source, SERVED_BOUND)
        time.sleep(0.1)


def close_all(socks):
    for s in socks:
        s.close()


def test_per_ip_limit_and_overrides():
    overrides = {"max.connections.per.ip": "2", "max.connections.per.ip.overrides": "127.0.0.2:1"}
    with Runnel(overrides=overrides) as b:
        held = [served(b.port), served(b.port)]
        try:
            extra = connect(b.port)
            assert closed_by_broker(extra), "a third connection from 127.0.0.1 was not closed at max.connections.per.ip=2"
            extra.close()
            held.append(served(b.port, "127.0.0.2"))
            extra = connect(b.port, "127.0.0.2")
            assert closed_by_broker(extra), "a second connection from 127.0.0.2 was not closed at its override of 1"
            extra.close()
            # A freed place is taken again.
            held.pop(0).close()
            held.append(served(b.port))
        finally:
            close_all(held)
        log = b.log_text()
        assert "Rejected connection from /127.0.0.1, address already has the configured maximum of 2 connections." \
            in log, "the refusal of 127.0.0.1 was not logged as Kafka logs it"
        assert "Rejected connection from /127.0.0.2, address already has the configured maximum of 1 connections." \
            in log, "the refusal of 127.0.0.2 was not logged as Kafka logs it"


def test_per_ip_zero_needs_overrides():
    with tempfile.TemporaryDirectory(prefix="runnel-quotas-") as d:
        args = [runnel_binary(), "serve", "--override", "node.id=1", "--override",
                "listeners=PLAINTEXT://127.0.0.1:0", "--override", "log.dirs=" + d,
                "--override", "max.connections.per.ip=0"]
        p = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        out = (p.stdout + p.stderr).decode(errors="replace")
        assert p.returncode != 0, "runnel started with max.connections.per.ip=0 and no overrides"
        assert "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set" \
            in out, out[-2000:]
    # With overrides, zero means: only the listed addresses.
    with Runnel(overrides={"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "127.0.0.1:5"}) as b:
        s = served(b.port)
        try:
            other = connect(b.port, "127.0.0.2")
            assert closed_by_broker(other), "127.0.0.2 was served at max.connections.per.ip=0"
            other.close()
        finally:
            s.close()


def test_listener_max_connections_waits_for_a_slot():
    with Runnel(overrides={"listener.name.plaintext.max.connections": "2"}) as b:
        held = [served(b.port), served(b.port)]
        try:
            waiting = connect(b.port)  # the kernel completes the handshake: it waits in the backlog
            held.append(waiting)
            assert not answered(waiting, 5, timeout=WAITING_WINDOW), \
                "a third connection was served at listener.name.plaintext.max.connections=2"
            held.pop(0).close()
            # The request already sent is read once the broker accepts.
            waiting.settimeout(SERVED_BOUND)
            (size,) = struct.unpack(">i", recv_exact(waiting, 4))
            recv_exact(waiting, size)
        finally:
            close_all(held)


def test_inter_broker_listener_exempt_and_evicts():
    overrides = {
        "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "max.connections": "2",
    }
    with Runnel(overrides=overrides) as b:
        ports = b.listener_ports()
        internal = ports["INTERNAL"]
        held = [served(b.port), served(b.port)]
        try:
            waiting = connect(b.port)
            held.append(waiting)
            assert not answered(waiting, 5, timeout=WAITING_WINDOW), "a third client connection was served at max.connections=2"
            # The inter-broker listener is not held to the broker-wide limit:
            # the least recently active client connection (the first) makes room.
            held.append(served(internal))
            assert closed_by_broker(held[0]), "no client connection was closed for the inter-broker one"
            assert answered(held[1], 6, timeout=5.0), "the more recently active client connection was closed"
        finally:
            close_all(held)
        assert "closing the least recently active connection of listener PLAINTEXT" in b.log_text()


def test_creation_rate():
    rate, count = 5, 20
    with Runnel(overrides={"max.connection.creation.rate": str(rate)}) as b:
        time.sleep(1.0)  # the bucket refills after the readiness probe
        start = time.monotonic()
        for i in range(count):
            served(b.port).close()
        elapsed = time.monotonic() - start
        # A full bucket admits `rate` at once; the rest come at `rate` a second.
        floor = (count - rate) / rate * 0.8
        assert elapsed >= floor, "%d connections in %.2f s at max.connection.creation.rate=%d" % (count, elapsed, rate)


def incremental_alter_broker_default(corr, configs):
    entries = [w.string(n) + w.i8(SET) + w.string(v) for n, v in configs]
    resource = w.i8(BROKER_RESOURCE) + w.string("") + w.array(entries)
    return w.request(44, 0, corr, w.array([resource]) + w.i8(0))


def test_dynamic_update():
    with Runnel() as b:
        held = [served(b.port), served(b.port), served(b.port)]
        close_all(held)
        with w.Connection(b.port) as c:
            body = c.call(incremental_alter_broker_default(2, [("max.connections.per.ip", "1")]), 2)
            r = w.Reader(body)
            r.i32()
            (err, msg, _, _) = r.array(lambda r: (r.i16(), r.string(), r.i8(), r.string()))[0]
            assert err == 0, (err, msg)
        s = served(b.port)
        try:
            extra = connect(b.port)
            assert closed_by_broker(extra), "max.connections.per.ip=1 set dynamically was not applied"
            extra.close()
        finally:
            s.close()


def set_ip_rate(port, ip, rate):
    """AlterClientQuotas of the ip entity's connection_creation_rate (None removes it)."""
    with w.Connection(port) as c:
        got = w.parse_alter_client_quotas_v1(
            c.call(w.alter_client_quotas_v1(5, [([("ip", ip)], [("connection_creation_rate", rate)])]), 5))
        assert got == [(0, None, {"ip": ip})], got


def test_ip_connection_creation_rate():
    with Runnel() as b:
        # 2 a second over Kafka's quota windows (11 of 1 s, the rate divided
        # by at least 10 s): about 20 connections at once, then none.
        set_ip_rate(b.port, "127.0.0.2", 2.0)
        outcomes = []
        for i in range(25):
            s = connect(b.port, "127.0.0.2")
            outcomes.append(answered(s, i + 1, SERVED_BOUND))  # a throttled one is closed after at most 1 s
            s.close()
        print("served %d of 25 connections from an ip held to 2 a second" % outcomes.count(True))
        assert all(outcomes[:15]), "connections within the ip's rate refused: %r" % outcomes
        assert not all(outcomes), "25 connections at once from an ip held to 2 a second all served"
        assert outcomes.count(True) <= 21, "%d connections served at 2 a second" % outcomes.count(True)
        # Another address has no quota (and no default ip quota is set).
        other = connect(b.port)
        assert answered(other, 99, SERVED_BOUND), "a connection from an address without a quota refused"
        other.close()
        set_ip_rate(b.port, "127.0.0.2", None)
        again = connect(b.port, "127.0.0.2")
        assert answered(again, 100, SERVED_BOUND), "the ip's quota removed, its connection still refused"
        again.close()


if __name__ == "__main__":
    sys.exit(run_tests([
        ("max.connections.per.ip and its overrides close the connection past the limit", test_per_ip_limit_and_overrides),
        ("max.connections.per.ip=0 needs overrides; with them only those addresses", test_per_ip_zero_needs_overrides),
        ("listener.name.<l>.max.connections makes the acceptor wait for a slot", test_listener_max_connections_waits_for_a_slot),
        ("the inter-broker listener passes max.connections and evicts a client", test_inter_broker_listener_exempt_and_evicts),
        ("max.connection.creation.rate paces new connections", test_creation_rate),
        ("max.connections.per.ip set through IncrementalAlterConfigs applies", test_dynamic_update),
        ("the ip entity's connection_creation_rate (KIP-612) closes connections over it", test_ip_connection_creation_rate),
    ]))
