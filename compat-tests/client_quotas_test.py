#!/usr/bin/python3
"""Client quotas (issue 18; KIP-13, KIP-124, KIP-219, KIP-546) as Kafka users
set and meet them, run against Runnel and, with --kafka, against Apache
Kafka 4.1.1 (the same assertions pass on both):

  - Kafka 4.1.1's own kafka-configs (kafka.admin.ConfigCommand) adds,
    describes and deletes quotas for users, clients, users with clients,
    their defaults and ips, printing what Kafka prints;
  - AlterClientQuotas sent by hand with what the tool refuses before
    sending: each refused entity gets Kafka's INVALID_REQUEST and message;
  - a confluent-kafka producer whose client id has producer_byte_rate is
    told to back off (throttle_cb with a throttle time, from Produce's
    throttle_time_ms) while one with another client id never is, and every
    record of both is delivered and read back once;
  - a confluent-kafka consumer whose client id has consumer_byte_rate is
    throttled and still reads every record once, in order; an unthrottled
    one is not.

A throttle is checked as reported by the client, never as a duration.

  /usr/bin/python3 compat-tests/client_quotas_test.py build/debug/runnel <kafka jar cache dir> [--kafka]
"""

import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

import kafka_wire as kw
from admin_http_test import scrape, value
from kafka_harness import kafka_classpath
from runnel_harness import Runnel, run_tests
from scram_admin import ConfigsTool

TOOL = None  # ConfigsTool, from argv
BROKER = None
INVALID_REQUEST = 42
DEADLINE = 120.0  # seconds for any produce or consume loop here


def eq(got, want, what):
    assert got == want, "%s: got %r, want %r" % (what, got, want)


def lines(text):
    """--describe's lines as a set: Kafka lists entities in its hash map's order."""
    return set(l for l in text.splitlines() if l.strip())


def configs(*args):
    return TOOL.ok(BROKER.bootstrap, *args)


def test_kafka_configs():
    users, clients, ips = ("--entity-type", "users"), ("--entity-type", "clients"), ("--entity-type", "ips")
    eq(configs("--alter", "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152", *users,
               "--entity-name", "alice"), "Completed updating config for user alice.\n", "users alice")
    configs("--alter", "--add-config", "request_percentage=12.5", *users, "--entity-default")
    configs("--alter", "--add-config", "producer_byte_rate=4096", *clients, "--entity-default")
    configs("--alter", "--add-config", "consumer_byte_rate=2048", *users, "--entity-name", "alice", *clients,
            "--entity-name", "app")
    configs("--alter", "--add-config", "connection_creation_rate=10", *ips, "--entity-name", "127.0.0.1")
    configs("--alter", "--add-config", "connection_creation_rate=5", *ips, "--entity-default")

    alice = "Quota configs for user-principal 'alice' are consumer_byte_rate=2097152.0, producer_byte_rate=1048576.0"
    default_user = "Quota configs for the default user-principal are request_percentage=12.5"
    alice_app = "Quota configs for user-principal 'alice', client-id 'app' are consumer_byte_rate=2048.0"
    eq(lines(configs("--describe", *users)), {alice, default_user}, "--describe users")
    eq(lines(configs("--describe", *users, "--entity-name", "alice")), {alice}, "--describe users alice")
    eq(lines(configs("--describe", *users, "--entity-default")), {default_user}, "--describe the default user")
    eq(lines(configs("--describe", *clients)),
       {"Quota configs for the default client-id are producer_byte_rate=4096.0"}, "--describe clients")
    eq(lines(configs("--describe", *users, *clients)), {alice_app}, "--describe users with clients")
    eq(lines(configs("--describe", *users, "--entity-name", "alice", *clients)), {alice_app},
       "--describe alice with clients")
    eq(lines(configs("--describe", *clients, "--entity-name", "app", *users)), {alice_app},
       "--describe clients app with users")
    eq(lines(configs("--describe", *clients, "--entity-name", "app")), set(), "--describe clients app alone")
    eq(lines(configs("--describe", *ips)),
       {"Quota configs for ip '127.0.0.1' are connection_creation_rate=10.0",
        "Quota configs for the default ip are connection_creation_rate=5.0"}, "--describe ips")
    eq(lines(configs("--describe", *users, "--entity-name", "nobody")), set(), "--describe a user without quotas")

    configs("--alter", "--delete-config", "consumer_byte_rate", *users, "--entity-name", "alice")
    eq(lines(configs("--describe", *users, "--entity-name", "alice")),
       {"Quota configs for user-principal 'alice' are producer_byte_rate=1048576.0"}, "after --delete-config")
    # Deleting what is not set is refused by the tool itself (it describes first).
    code, _, err = TOOL.run(BROKER.bootstrap, "--alter", "--delete-config", "consumer_byte_rate", *users,
                            "--entity-name", "nobody")
    eq(code, 1, "--delete-config of an unset quota: exit code")
    assert "Invalid config(s): consumer_byte_rate" in err, err
    code, _, err = TOOL.run(BROKER.bootstrap, "--alter", "--add-config", "producer_byte_rate=1.5", *users,
                            "--entity-name", "bob")
    eq(code, 1, "a fractional byte rate: exit code")
    assert "InvalidRequestException: producer_byte_rate cannot be a fractional value." in err, err

    # The defaults hold for every client here (all are user ANONYMOUS): gone,
    # they leave the later tests' clients unthrottled.
    configs("--alter", "--delete-config", "request_percentage", *users, "--entity-default")
    configs("--alter", "--delete-config", "producer_byte_rate", *clients, "--entity-default")
    eq(lines(configs("--describe", *users, "--entity-default")), set(), "the default user after --delete-config")
    eq(lines(configs("--describe", *clients)), set(), "clients after --delete-config of the default")


def test_refusals_by_hand():
    cases = [
        ([("user", "bob")], [("producer_byte_rate", 0.0)], "Quota producer_byte_rate must be greater than 0"),
        ([("user", "bob")], [("request_percentage", -1.0)], "Quota request_percentage must be greater than 0"),
        ([("user", "bob")], [("producer_byte_rate", 2.5)], "producer_byte_rate cannot be a fractional value."),
        ([("user", "bob")], [("no_such_quota", 1.0)], "Invalid configuration key no_such_quota"),
        ([("user", "bob")], [("connection_creation_rate", 1.0)], "Invalid configuration key connection_creation_rate"),
        ([("ip", "127.0.0.1")], [("producer_byte_rate", 1.0)], "Invalid configuration key producer_byte_rate"),
        ([("ip", "127.0.0.1")], [("connection_creation_rate", 1.5)],
         "connection_creation_rate cannot be a fractional value."),
        ([("ip", "127.0.0.1"), ("user", "bob")], [("connection_creation_rate", 1.0)],
         "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"),
        ([("ip", "no-such-host.invalid")], [("connection_creation_rate", 1.0)],
         "no-such-host.invalid is not a valid IP or resolvable host."),
        ([("topic", "t")], [("producer_byte_rate", 1.0)], "Unhandled client quota entity type: topic"),
        ([("user", "")], [("producer_byte_rate", 1.0)], "Empty user not supported"),
        ([], [("producer_byte_rate", 1.0)], "Invalid empty client quota entity"),
    ]
    with kw.Connection(BROKER.port) as conn:
        for i, (entity, ops, message) in enumerate(cases):
            got = kw.parse_alter_client_quotas_v1(conn.call(kw.alter_client_quotas_v1(i + 1, [(entity, ops)]), i + 1))
            eq(got, [(INVALID_REQUEST, message, dict(entity))], "refusal of %r %r" % (entity, ops))
        # Refused entities write nothing; one that passes beside them does.
        got = kw.parse_alter_client_quotas_v1(conn.call(kw.alter_client_quotas_v1(99, [
            ([("user", "carol")], [("producer_byte_rate", 1000.0)]),
            ([("user", "dave")], [("producer_byte_rate", 0.5)])]), 99))
        eq(sorted(got, key=lambda e: e[2]["user"]),
           [(0, None, {"user": "carol"}),
            (INVALID_REQUEST, "producer_byte_rate cannot be a fractional value.", {"user": "dave"})],
           "one entity refused beside one accepted")
    eq(lines(configs("--describe", "--entity-type", "users", "--entity-name", "carol")),
       {"Quota configs for user-principal 'carol' are producer_byte_rate=1000.0"}, "carol after the mixed request")
    eq(lines(configs("--describe", "--entity-type", "users", "--entity-name", "dave")), set(), "dave refused")


def create_topic(name):
    admin = AdminClient({"bootstrap.servers": BROKER.bootstrap})
    for f in admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=30).values():
        f.result(timeout=60)


def produce_all(client_id, topic, count, size):
    """Produces `count` records of `size` bytes: the throttle times librdkafka reported."""
    throttles = []
    failures = []
    producer = Producer({"bootstrap.servers": BROKER.bootstrap, "client.id": client_id, "linger.ms": 5,
                         "batch.size": 16384, "enable.idempotence": True,
                         "throttle_cb": lambda event: throttles.append(event.throttle_time)})

    def delivered(err, msg):
        if err is not None:
            failures.append(err)

    deadline = time.monotonic() + DEADLINE
    for i in range(count):
        value = ("%s-%06d-" % (client_id, i)).encode().ljust(size, b"x")
        while True:
            try:
                producer.produce(topic, value=value, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
        assert time.monotonic() < deadline, "%s: produce did not finish in %.0f s" % (client_id, DEADLINE)
    assert producer.flush(DEADLINE) == 0, "%s: records left undelivered" % client_id
    producer.poll(0)
    eq(failures, [], "%s: delivery failures" % client_id)
    return [t for t in throttles if t > 0]


def consume_all(client_id, topic, count, group):
    """Reads `count` records from the start: (values in order, positive throttle times reported)."""
    throttles = []
    consumer = Consumer({"bootstrap.servers": BROKER.bootstrap, "client.id": client_id, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "max.partition.fetch.bytes": 32768,
                         "throttle_cb": lambda event: throttles.append(event.throttle_time)})
    consumer.subscribe([topic])
    values = []
    deadline = time.monotonic() + DEADLINE
    try:
        while len(values) < count:
            assert time.monotonic() < deadline, "%s: %d of %d records in %.0f s" % (client_id, len(values), count,
                                                                                   DEADLINE)
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            values.append(msg.value())
        # A last poll delivers throttle events queued after the last record.
        consumer.poll(0.5)
    finally:
        consumer.close()
    return values, [t for t in throttles if t > 0]


def expected_values(client_id, count, size):
    return [("%s-%06d-" % (client_id, i)).encode().ljust(size, b"x") for i in range(count)]


def test_producer_byte_rate():
    create_topic("quota-produce")
    configs("--alter", "--add-config", "producer_byte_rate=10000", "--entity-type", "clients",
            "--entity-name", "noisy")
    # 200 kB against 10 kB/s: Kafka's rate divides by at least 10 of its 11
    # one-second windows, so this is 20 kB/s, twice the quota.
    noisy = produce_all("noisy", "quota-produce", 200, 1000)
    assert noisy, "the producer over producer_byte_rate reported no throttle"
    print("throttle times the producer over its quota was told (s): %s" % " ".join("%.3f" % t for t in noisy))
    if isinstance(BROKER, Runnel):
        # The sensors' rates, named as the JMX exporter names Kafka's
        # kafka.server:type=Produce beans: the client-id level tags no user.
        samples = scrape(BROKER.admin_port())
        assert value(samples, "kafka_server_produce_byte_rate", user="", client_id="noisy") > 0
        assert value(samples, "kafka_server_produce_throttle_time", user="", client_id="noisy") > 0
        assert ("kafka_server_produce_byte_rate", frozenset({("user", ""), ("client_id", "quiet")})) not in samples, \
            "a sensor for a client id without a quota"
    quiet = produce_all("quiet", "quota-produce", 200, 1000)
    eq(quiet, [], "throttles reported to a client id without a quota")
    values, _ = consume_all("reader", "quota-produce", 400, "quota-produce-check")
    eq(sorted(values), sorted(expected_values("noisy", 200, 1000) + expected_values("quiet", 200, 1000)),
       "records of both producers, each once")


def test_consumer_byte_rate():
    create_topic("quota-fetch")
    produce_all("filler", "quota-fetch", 200, 1000)
    configs("--alter", "--add-config", "consumer_byte_rate=10000", "--entity-type", "clients",
            "--entity-name", "slow")
    values, slow = consume_all("slow", "quota-fetch", 200, "quota-fetch-slow")
    eq(values, expected_values("filler", 200, 1000), "the throttled consumer's records, in order")
    assert slow, "the consumer over consumer_byte_rate reported no throttle"
    values, fast = consume_all("fast", "quota-fetch", 200, "quota-fetch-fast")
    eq(values, expected_values("filler", 200, 1000), "the unthrottled consumer's records")
    eq(fast, [], "throttles reported to a client id without a quota")


def main():
    global TOOL, BROKER
    TOOL = ConfigsTool(kafka_classpath(sys.argv[2]))
    if "--kafka" in sys.argv:
        import kafka_harness
        broker = kafka_harness.Kafka(sys.argv[2])
    else:
        broker = Runnel(overrides={"runnel.admin.listeners": "http://127.0.0.1:0"})
    with broker:
        BROKER = broker
        return run_tests([
            ("kafka-configs adds, describes and deletes quotas of users, clients, defaults and ips",
             test_kafka_configs),
            ("AlterClientQuotas refusals sent by hand get Kafka's errors; refused entities write nothing",
             test_refusals_by_hand),
            ("a producer over producer_byte_rate is throttled, another client id is not, nothing is lost",
             test_producer_byte_rate),
            ("a consumer over consumer_byte_rate is throttled and reads every record in order",
             test_consumer_byte_rate),
        ], broker)


if __name__ == "__main__":
    sys.exit(main())
