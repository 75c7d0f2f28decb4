"""A loopback proxy in front of one broker, forwarding whole Kafka frames,
through which the fault harness cuts, holds and delays traffic.

The broker advertises the proxy's address (advertised.listeners), so every
connection a client or another broker opens to it, after the bootstrap,
goes through the proxy. Each connection is a Link: a thread per direction
reading one size-prefixed frame at a time. A Link learns the client id of
its connection from the first request header; Runnel's inter-broker
connections name their broker ("broker-<id>-fetcher-...",
"broker-<id>-channel"), so a hold can cut one broker off from another and
leave clients alone.

What the injector (schedule.py) asks of it:
- cut(): every connection closed now, as a reset network path does; new
  ones are accepted;
- hold(peer=None) / release(peer=None): frames of every connection (or of
  those from broker `peer`) stop in both directions until released, as
  packets do while a network is partitioned; TCP keeps the connection, so
  what was held is delivered after the partition heals unless an end gave
  up on it first (a request timeout closes it);
- delay(seconds): each frame waits that long before it is forwarded.

A test's own per-frame faults go through the `on_request(link, frame)` and
`on_response(link, frame, api_key)` hooks, which answer None (forward) or
one of "close" (the connection closed instead), "half" (half the frame
sent, then closed), "swallow" (the frame dropped, the connection kept) or
("delay", seconds).
"""

import socket
import struct
import threading
import time


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def read_frame(sock):
    size = recv_exact(sock, 4)
    return size + recv_exact(sock, struct.unpack(">i", size)[0])


def request_client_id(frame):
    """The client id of a request frame (header v1 and later), '' if null."""
    if len(frame) < 14:
        return ""
    (n,) = struct.unpack(">h", frame[12:14])
    return frame[14:14 + n].decode("utf-8", "replace") if n > 0 else ""


def broker_prefix(node_id):
    """How Runnel's inter-broker client ids from node `node_id` begin."""
    return "broker-%d-" % node_id


class FrameProxy:
    def __init__(self, name="proxy", upstream_port=None, on_request=None, on_response=None):
        self.name = name
        self.upstream_port = upstream_port  # the broker's port, known once it has started
        self.on_request = on_request
        self.on_response = on_response
        self.cond = threading.Condition()
        self.held_all = False
        self.held_peers = set()  # client id prefixes whose frames are held
        self.delay_s = 0.0
        self.held_frames = 0  # frames that waited for a release: a hold had an effect
        self.links = []
        self.closed = False
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, name="%s-accept" % name, daemon=True).start()

    @property
    def address(self):
        return "127.0.0.1:%d" % self.port

    # -- what the injector does ---------------------------------------------

    def cut(self):
        with self.cond:
            links = list(self.links)
        for link in links:
            link.close()
        return len(links)

    def hold(self, peer=None):
        with self.cond:
            if peer is None:
                self.held_all = True
            else:
                self.held_peers.add(broker_prefix(peer))

    def release(self, peer=None):
        with self.cond:
            if peer is None:
                self.held_all = False
            else:
                self.held_peers.discard(broker_prefix(peer))
            self.cond.notify_all()

    def delay(self, seconds):
        with self.cond:
            self.delay_s = seconds

    def close(self):
        self.closed = True
        self.listener.close()
        self.release()
        with self.cond:
            self.held_peers.clear()
            self.cond.notify_all()
        self.cut()

    # -- the links ----------------------------------------------------------

    def _held(self, link):
        return self.held_all or any(link.client_id.startswith(p) for p in self.held_peers)

    def _gate(self, link):
        """Blocks while the link's frames are held; then waits out the delay."""
        with self.cond:
            if self._held(link):
                self.held_frames += 1
            while not self.closed and not link.dead.is_set() and self._held(link):
                self.cond.wait(0.1)
            delay = self.delay_s
        if delay:
            time.sleep(delay)

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10)
                upstream.settimeout(None)
            except (OSError, TypeError):
                client.close()  # the broker is down: as a refused connection would be
                continue
            link = Link(self, client, upstream)
            with self.cond:
                self.links = [x for x in self.links if not x.dead.is_set()]
                self.links.append(link)
            link.start()


class Link:
    """One connection through the proxy: the client's socket and the broker's."""

    def __init__(self, proxy, client, upstream):
        self.proxy = proxy
        self.client = client
        self.upstream = upstream
        self.client_id = ""
        self.api_of = {}  # correlation id -> api key of requests forwarded
        self.dead = threading.Event()

    def start(self):
        threading.Thread(target=self._requests, daemon=True).start()
        threading.Thread(target=self._responses, daemon=True).start()

    def close(self):
        if self.dead.is_set():
            return
        self.dead.set()
        for s in (self.client, self.upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _act(self, decision, frame, to):
        """Applies a hook's decision; False once the link is closed."""
        if decision is None:
            to.sendall(frame)
        elif decision == "swallow":
            pass
        elif decision == "close":
            self.close()
            return False
        elif decision == "half":
            to.sendall(frame[:len(frame) // 2])
            time.sleep(0.05)
            self.close()
            return False
        elif decision[0] == "delay":
            time.sleep(decision[1])
            to.sendall(frame)
        else:
            raise ValueError("unknown proxy decision %r" % (decision,))
        return True

    def _requests(self):
        try:
            while not self.dead.is_set():
                frame = read_frame(self.client)
                api_key, _, corr = struct.unpack(">hhi", frame[4:12])
                if not self.client_id:
                    self.client_id = request_client_id(frame)
                self.proxy._gate(self)
                hook = self.proxy.on_request
                decision = hook(self, frame) if hook else None
                self.api_of[corr] = api_key
                if not self._act(decision, frame, self.upstream):
                    return
        except (OSError, ConnectionError, struct.error):
            self.close()

    def _responses(self):
        try:
            while not self.dead.is_set():
                frame = read_frame(self.upstream)
                (corr,) = struct.unpack(">i", frame[4:8])
                api_key = self.api_of.pop(corr, None)
                self.proxy._gate(self)
                hook = self.proxy.on_response
                decision = hook(self, frame, api_key) if hook else None
                if not self._act(decision, frame, self.client):
                    return
        except (OSError, ConnectionError, struct.error):
            self.close()
