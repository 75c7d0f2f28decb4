"""The matrix scenarios through confluent-kafka-python (librdkafka).

One module for two rows: Debian's python3-confluent-kafka 1.7.0 on Debian's
librdkafka 2.0.2 (clients/librdkafka-debian), and the PyPI wheel with its
bundled current librdkafka (clients/confluent-kafka-pypi). Only the
interpreter differs. Where the older binding lacks an API (incremental
alter configs, consumer-group admin, delete records) the code takes what the
binding offers, and says "unsupported" only when nothing expresses it.
"""

import time

import confluent_kafka
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewPartitions, NewTopic

import librdkafka_security
from matrix_driver import SECURITY_COLUMNS, Unsupported, feed_through_failover, log, wait_until

N = 100


def common(ctx):
    c = {"bootstrap.servers": ctx.bootstrap, "broker.address.family": "v4", "client.id": ctx.name()}
    c.update(librdkafka_security.config(ctx.security or {}))
    return c


def admin(ctx):
    return AdminClient(common(ctx))


def producer(ctx, **conf):
    c = common(ctx)
    c.update({"linger.ms": 5, "message.timeout.ms": 60000})
    c.update({k.replace("_", "."): v for k, v in conf.items()})
    return Producer(c)


def consumer(ctx, group, **conf):
    c = common(ctx)
    c.update({"group.id": group, "enable.auto.commit": False, "auto.offset.reset": "earliest",
              "session.timeout.ms": 10000, "heartbeat.interval.ms": 500, "enable.partition.eof": False})
    c.update({k.replace("_", "."): v for k, v in conf.items()})
    return Consumer(c)


def create_topic(ctx, topic, partitions=1, config=None):
    a = admin(ctx)  # kept alive until its futures resolve
    # Every broker holds a replica: 1 on one broker, 3 in a cluster.
    fs = a.create_topics([NewTopic(topic, partitions, len(ctx.brokers), config=config or {})],
                         operation_timeout=20, request_timeout=20)
    fs[topic].result(25)
    wait_until("topic %s in metadata" % topic,
               lambda: len(partitions_of(ctx, topic) or []) == partitions, timeout=15)


def partitions_of(ctx, topic):
    # All topics: a Metadata request naming the topic would auto-create it again
    # (auto.create.topics.enable=true, and librdkafka's admin handle allows it).
    md = admin(ctx).list_topics(timeout=10)
    t = md.topics.get(topic)
    if t is None or t.error is not None:
        return None
    return sorted(t.partitions)


def produce_all(p, topic, records, partition=0):
    """records: list of dicts with value/key/headers/timestamp; returns delivery reports (err, offset) in order."""
    reports = [None] * len(records)

    def on_delivery(i):
        return lambda err, msg: reports.__setitem__(i, (err, msg.offset() if err is None else None))

    for i, r in enumerate(records):
        kw = {k: v for k, v in r.items() if k != "value"}
        p.produce(topic, r.get("value"), partition=partition, on_delivery=on_delivery(i), **kw)
        p.poll(0)
    deadline = time.monotonic() + 65
    while p.flush(1) > 0:
        if time.monotonic() > deadline:
            raise AssertionError("%d records still undelivered after 65 s" % len(p))
    errors = [r[0] for r in reports if r is None or r[0] is not None]
    assert not errors, "delivery errors: %s" % errors[:3]
    return [r[1] for r in reports]


def read_partition(ctx, topic, n, partition=0, offset=OFFSET_BEGINNING, timeout=20):
    """n records from topic-partition starting at offset (assign, no group commits)."""
    c = consumer(ctx, ctx.name("reader"))
    try:
        c.assign([TopicPartition(topic, partition, offset)])
        return take(c, n, timeout)
    finally:
        c.close()


def take(c, n, timeout=20):
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < n:
        if time.monotonic() > deadline:
            raise AssertionError("%d of %d records consumed in %.0f s" % (len(got), n, timeout))
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise AssertionError("consume error: %s" % m.error())
        got.append(m)
    return got


def values(n, tag):
    return [("%s value %d " % (tag, i)).encode() + b"x" * (i % 40) for i in range(n)]


# -- scenarios ---------------------------------------------------------------

def metadata(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 2)
    md = admin(ctx).list_topics(timeout=10)
    brokers = {b.id: (b.host, b.port) for b in md.brokers.values()}
    assert brokers == ctx.brokers, "brokers %s, want %s" % (brokers, ctx.brokers)
    t = md.topics.get(topic)
    assert t is not None and t.error is None, "topic %s missing from metadata" % topic
    assert sorted(t.partitions) == [0, 1], "partitions %s" % sorted(t.partitions)
    ids = sorted(ctx.brokers)
    for p in t.partitions.values():
        assert p.leader in ids and sorted(p.replicas) == ids, "partition %d: %s" % (p.id, p)
    # A new replica joins the ISR once it has fetched: wait for it.
    wait_until("the full ISR %s" % ids, lambda: all(
        sorted(p.isrs) == ids for p in admin(ctx).list_topics(timeout=10).topics[topic].partitions.values()))
    return "brokers %s, topic with 2 partitions on all of them" % sorted(brokers)


def create_delete_topics(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 3)
    assert partitions_of(ctx, topic) == [0, 1, 2]
    a = admin(ctx)
    a.delete_topics([topic], operation_timeout=20, request_timeout=20)[topic].result(25)
    wait_until("%s gone from metadata" % topic, lambda: partitions_of(ctx, topic) is None, timeout=15)


def produce_acks(acks):
    def scenario(ctx):
        topic = ctx.name()
        vals = values(N, topic)
        p = producer(ctx, acks=acks)
        offsets = produce_all(p, topic, [{"value": v} for v in vals])
        if acks != "0":  # acks=0 gets no offsets back
            assert offsets == list(range(N)), "delivery offsets %s..." % offsets[:5]
        got = read_partition(ctx, topic, N)
        assert [m.value() for m in got] == vals, "values differ"
        assert [m.offset() for m in got] == list(range(N))
        return "%d records" % N
    return scenario


def keys_headers_timestamps(ctx):
    topic = ctx.name()
    base = int(time.time() * 1000) - 3600_000
    recs = []
    for i in range(20):
        recs.append({"key": None if i % 5 == 3 else ("key-%d" % i).encode(),
                     "value": None if i % 7 == 2 else ("value-%d" % i).encode(),
                     "headers": [("h", b"one"), ("x", ("%d" % i).encode()), ("h", b"two"), ("empty", b"")],
                     "timestamp": base + i * 1000})
    produce_all(producer(ctx, acks="all"), topic, recs)
    got = read_partition(ctx, topic, len(recs))
    for i, (m, r) in enumerate(zip(got, recs)):
        assert m.key() == r["key"], "record %d key %r != %r" % (i, m.key(), r["key"])
        assert m.value() == r["value"], "record %d value %r != %r" % (i, m.value(), r["value"])
        assert m.headers() == r["headers"], "record %d headers %r != %r" % (i, m.headers(), r["headers"])
        assert m.timestamp() == (confluent_kafka.TIMESTAMP_CREATE_TIME, r["timestamp"]), \
            "record %d timestamp %s != %d" % (i, m.timestamp(), r["timestamp"])


def compression(codec):
    def scenario(ctx):
        topic = ctx.name()
        vals = [v * 20 for v in values(N, topic)]
        produce_all(producer(ctx, acks="all", compression_type=codec, linger_ms=50), topic, [{"value": v} for v in vals])
        got = read_partition(ctx, topic, N)
        assert [m.value() for m in got] == vals, "values differ"
        assert [m.offset() for m in got] == list(range(N))
    return scenario


def idempotent_produce(ctx):
    topic = ctx.name()
    vals = values(N * 5, topic)
    p = producer(ctx, enable_idempotence=True, max_in_flight_requests_per_connection=5, linger_ms=1,
                 batch_num_messages=10)
    offsets = produce_all(p, topic, [{"value": v} for v in vals])
    assert offsets == list(range(len(vals))), "delivery offsets out of order"
    got = read_partition(ctx, topic, len(vals))
    assert [m.value() for m in got] == vals, "values differ (duplicates or reorder)"
    time.sleep(0.5)
    end = consumer(ctx, ctx.name("w")).get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    assert end == (0, len(vals)), "watermarks %s, want (0, %d): duplicates" % (end, len(vals))


def txn_producer(ctx, txn_id):
    return producer(ctx, transactional_id=txn_id, enable_idempotence=True, acks="all",
                    transaction_timeout_ms=30000, message_timeout_ms=30000)  # librdkafka: <= the txn timeout


def txn_send(p, topic, partitions, vals):
    """Produces vals round-robin over the partitions in the open transaction;
    the delivery reports (err or None), filled in as they arrive."""
    reports = [None] * len(vals)
    for i, v in enumerate(vals):
        p.produce(topic, v, partition=i % partitions,
                  on_delivery=lambda err, msg, i=i: reports.__setitem__(i, err or "ok"))
        p.poll(0)
    return reports


def read_to_end(ctx, topic, partitions, isolation):
    """Every partition from the start with the isolation level until the
    fetch reaches its end (librdkafka's partition EOF: past any trailing
    control record, which position() does not count); values per partition."""
    c = consumer(ctx, ctx.name("reader"), isolation_level=isolation, enable_partition_eof=True)
    got = [[] for _ in range(partitions)]
    at_end = set()
    try:
        c.assign([TopicPartition(topic, part, OFFSET_BEGINNING) for part in range(partitions)])
        deadline = time.monotonic() + 20
        while len(at_end) < partitions:
            assert time.monotonic() < deadline, "reading %s %s: end of partitions %s only" % (
                topic, isolation, sorted(at_end))
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(m.partition())
                    continue
                raise AssertionError("consume error: %s" % m.error())
            got[m.partition()].append(m.value())
    finally:
        c.close()
    return got


FENCED = {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH}


def transactions(ctx):
    topic, txn_id = ctx.name(), ctx.name("txn-id")
    create_topic(ctx, topic, 2)
    first, aborted, second = values(10, "commit1"), values(6, "abort"), values(8, "commit2")
    p = txn_producer(ctx, txn_id)
    p.init_transactions(30)
    p.begin_transaction()
    txn_send(p, topic, 2, first)
    p.commit_transaction(30)
    p.begin_transaction()
    reports = txn_send(p, topic, 2, aborted)
    assert p.flush(30) == 0, "aborted transaction's records not flushed"
    assert reports == ["ok"] * len(aborted), "delivery of the records to abort: %s" % reports
    p.abort_transaction(30)
    p.begin_transaction()
    txn_send(p, topic, 2, second)
    p.commit_transaction(30)

    committed = read_to_end(ctx, topic, 2, "read_committed")
    everything = read_to_end(ctx, topic, 2, "read_uncommitted")
    w = consumer(ctx, ctx.name("w"))
    try:
        for part in range(2):
            want = first[part::2] + second[part::2]
            assert committed[part] == want, "read_committed partition %d: %d values, want %d" % (
                part, len(committed[part]), len(want))
            want_all = first[part::2] + aborted[part::2] + second[part::2]
            assert everything[part] == want_all, "read_uncommitted partition %d: %d values, want %d" % (
                part, len(everything[part]), len(want_all))
            end = w.get_watermark_offsets(TopicPartition(topic, part), timeout=10)[1]
            assert end == len(want_all) + 3, "partition %d end offset %d, want %d records + 3 markers" % (
                part, end, len(want_all))
    finally:
        w.close()

    # A second producer with the same transactional.id fences the first.
    p2 = txn_producer(ctx, txn_id)
    p2.init_transactions(30)
    error = None
    try:
        p.begin_transaction()
        p.produce(topic, b"fenced", partition=0)
        p.commit_transaction(30)
    except confluent_kafka.KafkaException as e:
        error = e.args[0]
    assert error is not None, "the fenced producer's transaction committed"
    assert error.code() in FENCED, "fenced producer failed with %s" % error
    p2.begin_transaction()
    reports = txn_send(p2, topic, 1, [b"after-fence"])
    p2.commit_transaction(30)
    assert reports == ["ok"], "second producer's delivery: %s" % reports
    return ("commit 10, abort 6, commit 8 on 2 partitions: read_committed 18, read_uncommitted 24, end offsets "
            "+3 markers each; the same transactional.id fenced the first (%s: %s); the second committed"
            % (error.name() + (", fatal" if error.fatal() else ""), error.str()))


def transactions_offsets(ctx):
    src, dst, group = ctx.name("in"), ctx.name("out"), ctx.name("group")
    create_topic(ctx, src, 1)
    create_topic(ctx, dst, 1)
    n, first = 10, 6
    produce_all(producer(ctx), src, [{"value": v} for v in values(n, src)])
    c = consumer(ctx, group, isolation_level="read_committed")
    p = txn_producer(ctx, ctx.name("txn-id"))
    try:
        seen = subscribed(c, src)
        got = seen + take(c, n - len(seen))
        assert [m.value() for m in got] == values(n, src), "input read by the group consumer differs"
        p.init_transactions(30)

        p.begin_transaction()
        txn_send(p, dst, 1, [b"out-" + m.value() for m in got[:first]])
        p.send_offsets_to_transaction([TopicPartition(src, 0, got[first - 1].offset() + 1)],
                                      c.consumer_group_metadata(), 30)
        p.commit_transaction(30)

        p.begin_transaction()
        reports = txn_send(p, dst, 1, [b"out-" + m.value() for m in got[first:]])
        assert p.flush(30) == 0 and reports == ["ok"] * (n - first), "second transaction's delivery: %s" % reports
        p.send_offsets_to_transaction([TopicPartition(src, 0, got[-1].offset() + 1)],
                                      c.consumer_group_metadata(), 30)
        p.abort_transaction(30)

        committed = c.committed([TopicPartition(src, 0)], timeout=20)[0]
        assert committed.error is None, "committed(): %s" % committed.error
        assert committed.offset == first, "group's committed offset %d after the aborted transaction, want %d" % (
            committed.offset, first)
    finally:
        c.close()
    outputs = [b"out-" + v for v in values(n, src)]
    assert read_to_end(ctx, dst, 1, "read_committed")[0] == outputs[:first], "output read_committed differs"
    assert read_to_end(ctx, dst, 1, "read_uncommitted")[0] == outputs, "output read_uncommitted differs"
    return ("group consumer read 10; txn 1 wrote 6 outputs + offset 6 (send_offsets_to_transaction with "
            "consumer_group_metadata), committed; txn 2 wrote 4 + offset 10, aborted: committed() = 6, "
            "output read_committed 6, read_uncommitted 10")


def subscribed(c, topic, timeout=45):
    """Subscribes and polls until the group assigned something; returns messages seen meanwhile."""
    assigned = []
    c.subscribe([topic], on_assign=lambda cons, parts: assigned.append(parts))
    seen = []
    deadline = time.monotonic() + timeout
    while not assigned:
        if time.monotonic() > deadline:
            raise AssertionError("no partitions assigned in %.0f s" % timeout)
        m = c.poll(0.2)
        if m is not None and not m.error():
            seen.append(m)
    return seen


def consume_earliest(ctx):
    topic = ctx.name()
    vals = values(10, topic)
    produce_all(producer(ctx), topic, [{"value": v} for v in vals])
    c = consumer(ctx, ctx.name("g"), auto_offset_reset="earliest")
    try:
        seen = subscribed(c, topic)
        got = seen + take(c, len(vals) - len(seen))
    finally:
        c.close()
    assert [m.value() for m in got] == vals
    assert got[0].offset() == 0


def consume_latest(ctx):
    topic = ctx.name()
    p = producer(ctx)
    produce_all(p, topic, [{"value": b"before %d" % i} for i in range(5)])
    c = consumer(ctx, ctx.name("g"), auto_offset_reset="latest")
    try:
        seen = subscribed(c, topic)
        # Positioned at the end once a marker produced now comes back; keep
        # producing markers until one does (never a fixed sleep).
        deadline = time.monotonic() + 20
        k = 0
        while not any(m.value().startswith(b"marker") for m in seen):
            assert time.monotonic() < deadline, "no marker consumed in 20 s"
            produce_all(p, topic, [{"value": b"marker %d" % k}])
            k += 1
            end = time.monotonic() + 1
            while time.monotonic() < end:
                m = c.poll(0.2)
                if m is not None and not m.error():
                    seen.append(m)
        after = [b"after %d" % i for i in range(10)]
        produce_all(p, topic, [{"value": v} for v in after])
        got = seen
        while sum(1 for m in got if m.value().startswith(b"after")) < len(after):
            got += take(c, 1)  # late markers may come first
    finally:
        c.close()
    vals = [m.value() for m in got]
    assert not any(v.startswith(b"before") for v in vals), "read records produced before positioning: %s" % vals[:3]
    assert [v for v in vals if v.startswith(b"after")] == after, "after-records: %s" % vals
    assert got[0].offset() >= 5
    return "positioned at offset %d" % got[0].offset()


def consume_timestamp(ctx):
    topic = ctx.name()
    base = int(time.time() * 1000) - 600_000
    recs = [{"value": b"ts %d" % i, "timestamp": base + i * 1000} for i in range(10)]
    produce_all(producer(ctx), topic, recs)
    c = consumer(ctx, ctx.name("g"))
    try:
        found = c.offsets_for_times([TopicPartition(topic, 0, base + 5000)], timeout=10)
        assert found[0].offset == 5, "offsets_for_times(ts of record 5) = %d" % found[0].offset
        between = c.offsets_for_times([TopicPartition(topic, 0, base + 6500)], timeout=10)
        assert between[0].offset == 7, "offsets_for_times(between 6 and 7) = %d" % between[0].offset
        c.assign(found)
        got = take(c, 5)
    finally:
        c.close()
    assert [m.value() for m in got] == [b"ts %d" % i for i in range(5, 10)], [m.value() for m in got]


def assignment_of(c):
    return {tp.partition for tp in c.assignment()}


def group_of_three(ctx):
    topic, group = ctx.name(), ctx.name("g")
    create_topic(ctx, topic, 6)
    p = producer(ctx)
    first = {}
    for part in range(6):
        offs = produce_all(p, topic, [{"value": b"one %d/%d" % (part, i)} for i in range(10)], partition=part)
        first.update({(part, o): True for o in offs})
    cons = [consumer(ctx, group, partition_assignment_strategy="range") for _ in range(3)]
    got = [[] for _ in cons]
    try:
        for c in cons:
            c.subscribe([topic])

        def poll_all(which):
            for i in which:
                m = cons[i].poll(0.1)
                if m is not None and not m.error():
                    got[i].append(m)

        def stable(which):
            poll_all(which)
            parts = [assignment_of(cons[i]) for i in which]
            return all(parts) and sum(len(s) for s in parts) == 6 and set().union(*parts) == set(range(6))

        wait_until("three consumers sharing 6 partitions", lambda: stable([0, 1, 2]), timeout=30, step=0)
        three = [sorted(assignment_of(c)) for c in cons]
        wait_until("the first 60 records", lambda: poll_all([0, 1, 2]) or
                   len({(m.partition(), m.offset()) for g in got for m in g}) >= 60, timeout=20, step=0)
        for i, c in enumerate(cons):
            if got[i]:
                c.commit(asynchronous=False)
        committed = cons[0].committed([TopicPartition(topic, x) for x in range(6)], timeout=10)
        assert [tp.offset for tp in committed] == [10] * 6, "committed %s" % [tp.offset for tp in committed]
        before = len(got[0]) + len(got[1])
        cons[2].close()
        wait_until("two consumers taking over 6 partitions", lambda: stable([0, 1]), timeout=30, step=0)
        two = [sorted(assignment_of(c)) for c in cons[:2]]
        for part in range(6):
            produce_all(p, topic, [{"value": b"two %d/%d" % (part, i)} for i in range(10)], partition=part)
        wait_until("the second 60 records", lambda: poll_all([0, 1]) or
                   sum(1 for g in got[:2] for m in g if m.value().startswith(b"two")) >= 60, timeout=20, step=0)
        again = [m for g in got[:2] for m in g[before:] if m.value().startswith(b"one")]
        seen = {(m.partition(), m.value()) for g in got for m in g}
        assert len(seen) == 120, "%d distinct records consumed, want 120" % len(seen)
    finally:
        for c in cons[:2]:
            c.close()
    assert not again, "%d committed records consumed again after the rebalance" % len(again)
    return "assignments %s then %s" % (three, two)


def offsets_resume(ctx):
    topic, group = ctx.name(), ctx.name("g")
    vals = values(10, topic)
    produce_all(producer(ctx), topic, [{"value": v} for v in vals])
    a = consumer(ctx, group)
    try:
        seen = subscribed(a, topic)
        got = seen + take(a, max(0, 4 - len(seen)))
        assert got[3].offset() == 3
        a.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
    finally:
        a.close()
    b = consumer(ctx, group)
    try:
        committed = b.committed([TopicPartition(topic, 0)], timeout=10)
        assert committed[0].offset == 4, "committed offset %d" % committed[0].offset
        seen = subscribed(b, topic)
        got = seen + take(b, max(0, 6 - len(seen)))
    finally:
        b.close()
    assert [m.offset() for m in got[:6]] == list(range(4, 10)), "resumed at %d" % got[0].offset()
    assert [m.value() for m in got[:6]] == vals[4:]


def topic_config(ctx, topic):
    res = ConfigResource(ConfigResource.Type.TOPIC if hasattr(ConfigResource, "Type") else "topic", topic)
    a = admin(ctx)
    return a.describe_configs([res], request_timeout=20)[res].result(25)


def admin_configs(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    entries = topic_config(ctx, topic)
    r = entries["retention.ms"]
    assert r.value == "604800000" and r.is_default, "retention.ms %s default=%s" % (r.value, r.is_default)
    assert entries["cleanup.policy"].value == "delete"
    a = admin(ctx)
    if hasattr(a, "incremental_alter_configs"):
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry
        res = ConfigResource("topic", topic, incremental_configs=[
            ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
        a.incremental_alter_configs([res])[res].result(25)
        how = "IncrementalAlterConfigs"
    else:  # 1.7.0: only the non-incremental AlterConfigs (replaces the topic's dynamic configs)
        res = ConfigResource("topic", topic, set_config={"retention.ms": "3600000"})
        a.alter_configs([res], request_timeout=20)[res].result(25)
        how = "AlterConfigs"
    entries = wait_until("retention.ms altered", lambda: (lambda e: e["retention.ms"].value == "3600000" and e)(
        topic_config(ctx, topic)), timeout=10)
    r = entries["retention.ms"]
    assert not r.is_default, "altered retention.ms still reported as default"
    source = getattr(r.source, "value", r.source)  # an enum in 2.x, its int in 1.7.0
    assert source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value, "source %s" % r.source
    return how


def admin_grow_partitions(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    a = admin(ctx)
    a.create_partitions([NewPartitions(topic, 3)], operation_timeout=20, request_timeout=20)[topic].result(25)
    wait_until("3 partitions in metadata", lambda: partitions_of(ctx, topic) == [0, 1, 2], timeout=15)


def admin_groups(ctx):
    topic, group = ctx.name(), ctx.name("g")
    produce_all(producer(ctx), topic, [{"value": b"x"}])
    c = consumer(ctx, group)
    try:
        subscribed(c, topic)
        a = admin(ctx)
        if hasattr(a, "list_consumer_groups"):
            listed = a.list_consumer_groups(request_timeout=20).result(25)
            names = {g.group_id for g in listed.valid}
            assert group in names, "group %s not listed (%d groups)" % (group, len(names))
            desc = a.describe_consumer_groups([group], request_timeout=20)[group].result(25)
            state = str(desc.state)
            assert "STABLE" in state.upper(), "state %s" % state
            assert len(desc.members) == 1, "members %s" % desc.members
            m = desc.members[0]
            assert [tp.partition for tp in m.assignment.topic_partitions] == [0], m.assignment.topic_partitions
            assert desc.protocol_type == "consumer" if hasattr(desc, "protocol_type") else True
            return "ListGroups + DescribeGroups: %s, member %s" % (state, m.client_id)
        # 1.7.0: list_groups() lists (ListGroups) and describes (DescribeGroups) in one call.
        listed = {g.id: g for g in a.list_groups(timeout=20)}
        assert group in listed, "group %s not listed" % group
        g = a.list_groups(group, timeout=20)[0]
        assert g.state == "Stable" and g.protocol_type == "consumer", "state %s type %s" % (g.state, g.protocol_type)
        assert len(g.members) == 1, "members %s" % g.members
        return "list_groups: %s/%s, member %s" % (g.state, g.protocol, g.members[0].client_id)
    finally:
        c.close()


def admin_delete_records(ctx):
    topic = ctx.name()
    vals = values(10, topic)
    produce_all(producer(ctx), topic, [{"value": v} for v in vals])
    a = admin(ctx)
    tp = TopicPartition(topic, 0, 6)
    res = a.delete_records([tp], request_timeout=20)
    deleted = list(res.values())[0].result(25)
    low = getattr(deleted, "low_watermark", None)
    assert low == 6, "DeleteRecords low watermark %s" % low
    c = consumer(ctx, ctx.name("g"))
    try:
        wm = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        assert wm == (6, 10), "watermarks %s, want (6, 10)" % (wm,)
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        got = take(c, 4)
    finally:
        c.close()
    assert got[0].offset() == 6 and [m.value() for m in got] == vals[6:]


FAILOVER_BEFORE = 100  # records acknowledged before the kill is asked for
FAILOVER_AFTER = 100   # records acknowledged after a new leader is named
FAILOVER_EVERY = 0.005  # one record per 5 ms


def leader_of(ctx, topic):
    p = admin(ctx).list_topics(timeout=5).topics[topic].partitions[0]
    return p.leader if p.error is None else -1


def leader_failover(ctx):
    """One partition on every broker; an idempotent acks=all producer sends a
    record every 5 ms while an assigned consumer reads; after 100
    acknowledgements the harness kills the leader. Producing goes on until a
    new leader is named and 100 more are acknowledged; then every record sent
    must have been acknowledged and consumed exactly once, in order."""
    topic = ctx.name()
    ids = sorted(ctx.brokers)
    create_topic(ctx, topic, 1)
    wait_until("%s's full ISR" % topic, lambda: sorted(
        admin(ctx).list_topics(timeout=10).topics[topic].partitions[0].isrs) == ids, timeout=30)
    old = leader_of(ctx, topic)
    p = producer(ctx, acks="all", enable_idempotence=True, linger_ms=1, message_timeout_ms=80000)
    c = consumer(ctx, ctx.name("reader"))
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    sent, acked, errors, consumed = [], {}, [], []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked[msg.value()] = msg.offset()

    def step():
        v = b"%s-%06d" % (topic.encode(), len(sent))
        p.produce(topic, v, partition=0, on_delivery=on_delivery)
        sent.append(v)
        p.poll(0)
        m = c.poll(FAILOVER_EVERY)
        while m is not None:
            if m.error():
                if m.error().fatal():
                    raise AssertionError("consumer: %s" % m.error())
                log("consumer (transient): %s" % m.error())
            else:
                consumed.append((m.offset(), m.value()))
            m = c.poll(0)

    try:
        new = feed_through_failover(ctx, topic, step, lambda: len(acked), lambda: leader_of(ctx, topic), old,
                                    FAILOVER_BEFORE, FAILOVER_AFTER, "acknowledged",
                                    errors=lambda: ", errors %s" % errors[:3], every=0.25)
        left = p.flush(60)
        assert left == 0, "%d records not delivered 60 s after the last send" % left
        deadline = time.monotonic() + 30
        while len(consumed) < len(sent) and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                consumed.append((m.offset(), m.value()))
    finally:
        c.close()
    assert not errors, "%d delivery errors: %s" % (len(errors), errors[:3])
    assert len(acked) == len(sent), "%d of %d acknowledged" % (len(acked), len(sent))
    values_read = [v for _, v in consumed]
    assert values_read == sent, "consumed %d records, sent %d (first difference at %s)" % (
        len(values_read), len(sent), next((i for i, (a, b) in enumerate(zip(values_read, sent)) if a != b),
                                          min(len(values_read), len(sent))))
    assert [o for o, _ in consumed] == [acked[v] for v in sent], "acknowledged offsets differ from consumed ones"
    return "%d records, leader %d killed, %d took over: all acknowledged and consumed once, in order" % (
        len(sent), old, new)


def security_round_trip(ctx):
    """A security column (ctx.security): over its listener only, admin
    creates a topic (2 partitions) and metadata shows it, with the broker
    advertised on this listener; acks=all produce; a group consumes every
    record exactly, commits, and the committed offsets are read back; the
    group is listed."""
    topic, group = ctx.name(), ctx.name("group")
    connect(ctx)
    create_topic(ctx, topic, 2)
    md = admin(ctx).list_topics(timeout=10)
    ports = sorted({b.port for b in md.brokers.values()})
    assert ports == [ctx.port], "brokers advertised on ports %s, not the column's %d" % (ports, ctx.port)
    sent = {p: values(SECURE_N, "%s p%d" % (ctx.scenario, p)) for p in (0, 1)}
    p = producer(ctx, acks="all")
    for part, vals in sent.items():
        offsets = produce_all(p, topic, [{"value": v} for v in vals], partition=part)
        assert offsets == list(range(SECURE_N)), "partition %d offsets %s" % (part, offsets)
    c = consumer(ctx, group)
    try:
        c.subscribe([topic])
        got = take(c, 2 * SECURE_N, timeout=40)
        by_part = {part: [m.value() for m in got if m.partition() == part] for part in (0, 1)}
        assert by_part == sent, "consumed %s" % {k: len(v) for k, v in by_part.items()}
        c.commit(asynchronous=False)
        committed = c.committed([TopicPartition(topic, part) for part in (0, 1)], timeout=20)
        assert [tp.offset for tp in committed] == [SECURE_N, SECURE_N], committed
        groups = [g.id for g in admin(ctx).list_groups(timeout=20)]
        assert group in groups, "group %s not listed: %s" % (group, groups)
    finally:
        c.close()
    return "%s: %d records over %s, committed %d+%d" % (ctx.security["listener"], 2 * SECURE_N,
                                                          ctx.security["security_protocol"], SECURE_N, SECURE_N)


SECURE_N = 20  # records per partition in a security column


def connect(ctx, timeout=20):
    """The column's listener answers metadata. librdkafka tells why it does
    not (a TLS or SASL failure) only to error_cb: an admin request just
    times out."""
    errors = []
    p = Producer(dict(common(ctx), error_cb=errors.append))
    deadline = time.monotonic() + timeout
    while True:
        try:
            p.list_topics(timeout=1)
            return
        except confluent_kafka.KafkaException as e:
            p.poll(0.1)
            if errors or time.monotonic() > deadline:
                why = errors[-1] if errors else e
                raise AssertionError("no metadata over %s: %s" % (ctx.security["listener"], why))


def scenarios():
    s = {
        "metadata": metadata,
        "create_delete_topics": create_delete_topics,
        "produce_acks0": produce_acks("0"),
        "produce_acks1": produce_acks("1"),
        "produce_acksall": produce_acks("all"),
        "keys_headers_timestamps": keys_headers_timestamps,
        "compression_gzip": compression("gzip"),
        "compression_snappy": compression("snappy"),
        "compression_lz4": compression("lz4"),
        "compression_zstd": compression("zstd"),
        "idempotent_produce": idempotent_produce,
        "transactions": transactions,
        "transactions_offsets": transactions_offsets,
        "consume_earliest": consume_earliest,
        "consume_latest": consume_latest,
        "consume_timestamp": consume_timestamp,
        "group_of_three": group_of_three,
        "offsets_resume": offsets_resume,
        "admin_configs": admin_configs,
        "admin_grow_partitions": admin_grow_partitions,
        "admin_groups": admin_groups,
        "admin_delete_records": admin_delete_records,
        "leader_failover": leader_failover,
    }
    s.update({sid: security_round_trip for sid in SECURITY_COLUMNS})
    if not hasattr(AdminClient, "delete_records"):
        s["admin_delete_records"] = Unsupported("confluent-kafka-python %s has no AdminClient.delete_records "
                                                "(added in 2.4)" % confluent_kafka.version()[0])
    return s


def versions():
    return "confluent-kafka %s, librdkafka %s" % (confluent_kafka.version()[0], confluent_kafka.libversion()[0])
