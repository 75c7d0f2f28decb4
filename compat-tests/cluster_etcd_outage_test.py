"""etcd down for a while, then back, under a three-broker Runnel cluster
(label "cluster"; 9000 ms sessions, 1000 ms heartbeats, etcd requests
bounded by runnel.etcd.request.timeout.ms, 5000 ms by default). One topic,
3 partitions of replication factor 3; throughout, a librdkafka producer
(acks=all, idempotent) and a librdkafka consumer (assigned, no group) run,
and a prober sends every broker a one-record acks=1 Produce for every
partition several times a second.

  1. etcd SIGSTOPped for 4 s, less than the session: every broker keeps
     its registration (the same broker epoch: the key's create revision),
     none fences itself, the leaders stay, and produce goes on (acks=1
     and acks=all need no etcd while the ISR does not change).
  2. etcd SIGKILLed and, after 1.5 sessions, restarted on the same data dir
     and ports: every broker stops leading once its lease may have lapsed
     (README, "A cluster": before another can be elected); when etcd is
     back (it restores its leases with their whole TTL) each resumes its
     lapsed session, same broker epoch, and leads again, and each partition
     ends with exactly one leader all brokers agree on.
  3. etcd SIGKILLed and restarted at once: as 1 (etcd keeps its leases
     across a restart and gives each its whole TTL again).

Always: at no probed moment (one round of the prober over the three
brokers) do two brokers both accept a Produce for the same partition; and
at the end every record the producer had acknowledged is read back by the
consumer that ran through both outages. What Runnel did is printed:
whether produce stopped, and how long until it and the registrations came
back after etcd did.

  /usr/bin/python3 compat-tests/cluster_etcd_outage_test.py build/debug/runnel
"""

import sys
import threading
import time

import kafka_wire as kw
from cluster_harness import NONE, Cluster, run_tests, runnel_binary, seed_assignment, wait_until

IDS = [1, 2, 3]
TOPIC = "outage"
PARTITIONS = 3
SESSION_MS = 9000  # Runnel's default broker.session.timeout.ms
HEARTBEAT_MS = 1000
PAUSE_S = 4.0                    # phase 1: well within the session
DOWN_S = 1.5 * SESSION_MS / 1000  # phase 2: more than the session
BOUND = 30.0                     # seconds: CI machines are loaded
FENCED_LOG = "the broker session may have lapsed"


class Prober(threading.Thread):
    """Rounds of one acks=1 Produce per (broker, partition); a round is
    one sampled moment. Keeps, per round, which brokers accepted which
    partition, and every round in which two brokers accepted the same one."""

    def __init__(self, c):
        super().__init__(daemon=True)
        self.c = c
        self.stop_event = threading.Event()
        self.rounds = []   # (start time, {partition: [brokers that accepted]})
        self.doubled = []  # (start time, partition, brokers)
        self.errors = 0

    def probe(self, node_id, partition):
        batch = kw.record_batch([(b"probe", b"probe-%d" % node_id, ())], int(time.time() * 1000))
        try:
            body = self.c.call(node_id, lambda corr: kw.produce_v8(corr, 1, {TOPIC: [(partition, batch)]},
                                                                    timeout_ms=2000), timeout=3.0)
            return kw.parse_produce_v8(body)[(TOPIC, partition)][0] == NONE
        except Exception:  # a refused or timed-out connection: not accepted
            self.errors += 1
            return False

    def run(self):
        while not self.stop_event.is_set():
            started = time.monotonic()
            accepted = {p: [i for i in IDS if self.probe(i, p)] for p in range(PARTITIONS)}
            self.rounds.append((started, accepted))
            for p, brokers in accepted.items():
                if len(brokers) > 1:
                    self.doubled.append((started, p, brokers))
            self.stop_event.wait(0.05)

    def all_led_since(self, t):
        """The first round from `t` on in which every partition was accepted by one broker."""
        return next((s for s, acc in self.rounds if s >= t and all(len(b) == 1 for b in acc.values())), None)

    def none_led_since(self, t):
        """The first round from `t` on in which no broker accepted any partition."""
        return next((s for s, acc in self.rounds if s >= t and not any(acc.values())), None)

    def stop(self):
        self.stop_event.set()
        self.join(30)


class Clients:
    """An idempotent acks=all producer (one record every few ms, round robin
    over the partitions) and an assigned consumer from the start, both
    bootstrapped from every broker and left to ride the outages out."""

    def __init__(self, c):
        from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING
        self.producer = Producer({"bootstrap.servers": c.bootstrap(), "acks": "all", "enable.idempotence": True,
                                  "linger.ms": 5, "message.timeout.ms": 300000})
        self.consumer = Consumer({"bootstrap.servers": c.bootstrap(), "group.id": "outage-reader",
                                  "enable.auto.commit": False, "enable.partition.eof": False})
        self.consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        self.acked, self.errors, self.read = [], [], {}
        self.sent = 0
        self.producing = threading.Event()
        self.producing.set()
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self._produce, daemon=True),
                        threading.Thread(target=self._consume, daemon=True)]
        for t in self.threads:
            t.start()

    def _delivered(self, err, msg):
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acked.append((msg.partition(), msg.offset(), msg.value()))

    def _produce(self):
        while self.producing.is_set():
            try:
                self.producer.produce(TOPIC, key=b"rec", value=b"rec-%d" % self.sent, partition=self.sent % PARTITIONS,
                                      on_delivery=self._delivered)
                self.sent += 1
            except BufferError:
                pass
            self.producer.poll(0.005)

    def _consume(self):
        while not self.done.is_set():
            m = self.consumer.poll(0.2)
            if m is None or m.error() is not None:
                continue  # errors are transient while etcd is away: librdkafka retries
            if m.key() == b"rec":
                self.read.setdefault(m.value(), []).append((m.partition(), m.offset()))

    def finish(self, timeout):
        """Stops producing, waits for every delivery, then for the consumer to
        have read every acknowledged record; returns the ones it has not."""
        self.producing.clear()
        self.threads[0].join(10)
        left = self.producer.flush(timeout)
        assert left == 0, "%d records still undelivered %.0f s after producing stopped" % (left, timeout)
        try:
            wait_until(lambda: all(v in self.read for _, _, v in self.acked), timeout,
                       "the consumer to read every acknowledged record", poll=0.5)
        finally:
            self.done.set()
            self.threads[1].join(10)
            self.consumer.close()
        return [v for _, _, v in self.acked if v not in self.read]


def broker_epochs(c):
    """{node id: its registration key's create revision} as etcd holds them."""
    out = {}
    for i in IDS:
        kv = c.etcd_get("brokers/%d" % i)
        if kv is not None:
            out[i] = kv["create_revision"]
    return out


def agreed_leaders(c):
    """Every broker lists the three brokers and the same single leader (a
    live broker) and epoch for each partition: -> {partition: (leader, epoch)}."""
    views = {}
    for i in IDS:
        md = c.metadata(i, [TOPIC])
        assert sorted(md["brokers"]) == IDS, "node %d lists brokers %s" % (i, sorted(md["brokers"]))
        parts = md["topics"][TOPIC]["partitions"]
        views[i] = {p: (v["leader"], v["leader_epoch"]) for p, v in parts.items()}
        for p, (leader, _) in views[i].items():
            assert leader in IDS, "node %d: %s-%d has leader %d" % (i, TOPIC, p, leader)
    assert len({tuple(sorted(v.items())) for v in views.values()}) == 1, "brokers disagree: %s" % views
    return views[IDS[0]]


def fenced_count(c):
    return {i: c.brokers[i].log_text().count(FENCED_LOG) for i in IDS}


def outage(binary):
    with Cluster(3, binary, session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS) as c:
        from cluster_harness import create_topic
        create_topic(c.bootstrap(), TOPIC, PARTITIONS, 3)
        c.wait_assignment(TOPIC, seed_assignment(IDS, PARTITIONS, 3), BOUND)
        prober = Prober(c)
        prober.start()
        clients = Clients(c)
        try:
            wait_until(lambda: len(clients.acked) >= 100 and prober.all_led_since(time.monotonic() - 1), BOUND,
                       "records acknowledged and every partition led before the outage", poll=0.2)
            leaders = agreed_leaders(c)
            epochs = broker_epochs(c)
            assert sorted(epochs) == IDS, "registrations in etcd: %s" % epochs
            fenced_before = fenced_count(c)

            # 1. A pause shorter than the session.
            acked = len(clients.acked)
            paused_at = time.monotonic()
            c.etcd.sigstop()
            time.sleep(PAUSE_S)
            acked_during_pause = len(clients.acked) - acked
            led_during_pause = prober.all_led_since(paused_at + 0.5)
            c.etcd.sigcont()
            resumed_at = time.monotonic()
            wait_until(lambda: prober.all_led_since(resumed_at), BOUND, "every partition led after the pause")
            assert broker_epochs(c) == epochs, "registrations after a %.1f s pause: %s, were %s" % (
                PAUSE_S, broker_epochs(c), epochs)
            assert fenced_count(c) == fenced_before, "a broker fenced itself in a %.1f s pause (session %d ms)" % (
                PAUSE_S, SESSION_MS)
            assert agreed_leaders(c) == leaders, "leaders changed in the pause: %s, were %s" % (
                agreed_leaders(c), leaders)
            assert led_during_pause and acked_during_pause > 0, (
                "produce stopped in a %.1f s pause: acks=1 %s, %d acks=all records acknowledged" % (
                    PAUSE_S, "accepted" if led_during_pause else "refused", acked_during_pause))
            print("     etcd paused %.1f s: registrations kept, no broker fenced, leaders unchanged; %d records "
                  "acknowledged meanwhile" % (PAUSE_S, acked_during_pause), flush=True)

            # 2. Down for longer than the session, then back on the same data dir and ports.
            killed_at = time.monotonic()
            c.etcd.kill9()
            stopped_at = wait_until(lambda: prober.none_led_since(killed_at), SESSION_MS / 1000 + BOUND,
                                    "every broker to stop leading with etcd gone")
            time.sleep(max(0.0, killed_at + DOWN_S - time.monotonic()))
            acked = len(clients.acked)
            c.etcd.restart()
            back_at = time.monotonic()
            # etcd restores its leases with their whole TTL when it restarts:
            # the registrations are there again at once, and each broker
            # resumes its own (same epoch) instead of waiting it out.
            led_at = wait_until(lambda: prober.all_led_since(back_at), BOUND, "produce accepted again")
            new_epochs = broker_epochs(c)
            assert new_epochs == epochs, "registrations after etcd's restart: %s, were %s (resumed ones keep " \
                "their epoch)" % (new_epochs, epochs)
            registered_at = time.monotonic()
            c.wait_formed(BOUND, "every broker listing every broker after etcd's restart")
            after = wait_until(lambda: agreed_leaders(c), BOUND, "one leader per partition agreed by every broker")
            assert all("resumed its session" in c.brokers[i].log_text() for i in IDS), \
                "not every broker resumed its lapsed session"
            assert all(fenced_count(c)[i] > fenced_before[i] for i in IDS), (
                "not every broker fenced itself with etcd down %.1f s: %s" % (DOWN_S, fenced_count(c)))
            wait_until(lambda: len(clients.acked) > acked + 100, BOUND, "the producer to be acknowledged again",
                       poll=0.2)
            recovered_at = time.monotonic()
            print("     etcd killed: every broker had stopped leading %.1f s later (fence after %d ms without a "
                  "renewal); restarted after %.1f s: sessions resumed and produce accepted %.1f s, all listed %.1f s, "
                  "librdkafka acknowledged again %.1f s after etcd was back; leaders %s -> %s; epochs %s -> %s" % (
                      stopped_at - killed_at, SESSION_MS - HEARTBEAT_MS, back_at - killed_at,
                      led_at - back_at, registered_at - back_at, recovered_at - back_at, leaders, after,
                      epochs, new_epochs), flush=True)

            # 3. Killed and restarted at once (well within the session): as a pause.
            fenced_now = fenced_count(c)
            kill_at = time.monotonic()
            c.etcd.kill9()
            c.etcd.restart()
            back_at = time.monotonic()
            wait_until(lambda: prober.all_led_since(back_at), BOUND, "every partition led after a quick restart")
            # Past the moment a lapsed session would have been noticed.
            time.sleep(max(0.0, kill_at + SESSION_MS / 1000 - time.monotonic()))
            assert broker_epochs(c) == new_epochs, "registrations after a %.1f s restart: %s, were %s" % (
                back_at - kill_at, broker_epochs(c), new_epochs)
            assert fenced_count(c) == fenced_now, "a broker fenced itself when etcd restarted in %.1f s" % (
                back_at - kill_at)
            assert agreed_leaders(c) == after, "leaders changed: %s, were %s" % (agreed_leaders(c), after)
            print("     etcd killed and restarted in %.1f s: registrations kept, no broker fenced, leaders unchanged"
                  % (back_at - kill_at), flush=True)
            time.sleep(2)
        finally:
            prober.stop()
        missing = clients.finish(120)
        assert not missing, "%d acknowledged records never read back (first %s)" % (len(missing), missing[:5])
        assert not clients.errors, "the producer failed records: %s" % clients.errors[:5]
        dup = sum(1 for v in clients.read.values() if len(v) > 1)
        print("     %d records acknowledged, all read back (%d read twice); %d probe rounds, %d probe connections "
              "failed" % (len(clients.acked), dup, len(prober.rounds), prober.errors), flush=True)
        assert not prober.doubled, "two brokers accepted a Produce for one partition in the same round: %s" % (
            prober.doubled[:5])


def main():
    binary = runnel_binary()
    return run_tests([
        ("etcd paused then killed and restarted: registrations, one leader, clients recover",
         lambda: outage(binary)),
    ])


if __name__ == "__main__":
    sys.exit(main())
