"""The matrix scenarios through kafka-python (pure Python; the PyPI 2.x pin
in clients/kafka-python/run, with Debian's snappy, lz4 and zstandard
modules for its codecs)."""

import logging
import time

import kafka
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.structs import OffsetAndMetadata

from matrix_driver import SECURITY_COLUMNS, feed_through_failover, wait_until

N = 100
# kafka-python's 2 s default for probing the broker's version is short for
# an ASan broker on a busy machine.
COMMON = {"api_version_auto_timeout_ms": 30000, "request_timeout_ms": 30000}
DYNAMIC_TOPIC_CONFIG = 1  # DescribeConfigs ConfigSource


def common(ctx):
    """COMMON, and a security column's settings (matrix_driver's ctx.security)."""
    c = dict(COMMON)
    col = ctx.security or {}
    if col:
        c["security_protocol"] = col["security_protocol"]
    if "ca_pem" in col:
        c.update(ssl_cafile=col["ca_pem"], ssl_check_hostname=True)
    if "client_cert_pem" in col:
        c.update(ssl_certfile=col["client_cert_pem"], ssl_keyfile=col["client_key_pem"])
    if "sasl_mechanism" in col:
        c.update(sasl_mechanism=col["sasl_mechanism"], sasl_plain_username=col["sasl_username"],
                 sasl_plain_password=col["sasl_password"])
    return c


def admin(ctx):
    return KafkaAdminClient(bootstrap_servers=ctx.bootstrap, client_id=ctx.name(), **common(ctx))


def producer(ctx, **conf):
    # acks=all unless a scenario says otherwise: with acks=1 in a cluster the
    # high watermark (what consumers, offsets_for_times and delete_records
    # see) may still lag the acknowledgement, on Kafka as on Runnel.
    c = dict(common(ctx), linger_ms=5, acks="all")
    c.update(conf)
    return KafkaProducer(bootstrap_servers=ctx.bootstrap, client_id=ctx.name(), **c)


def consumer(ctx, group=None, **conf):
    c = dict(common(ctx), group_id=group, enable_auto_commit=False, auto_offset_reset="earliest",
             session_timeout_ms=10000, heartbeat_interval_ms=500, client_id=ctx.name())
    c.update(conf)
    return KafkaConsumer(bootstrap_servers=ctx.bootstrap, **c)


def topic_names(ctx):
    a = admin(ctx)
    try:
        return set(a.list_topics())
    finally:
        a.close()


def partitions_of(ctx, topic):
    a = admin(ctx)
    try:
        for t in a.describe_topics([topic]):
            if t["topic"] == topic and t["error_code"] == 0:
                return sorted(p["partition"] for p in t["partitions"])
        return None
    finally:
        a.close()


def create_topic(ctx, topic, partitions=1):
    a = admin(ctx)
    try:
        a.create_topics([NewTopic(topic, partitions, len(ctx.brokers))], timeout_ms=20000)
    finally:
        a.close()
    wait_until("topic %s with %d partitions" % (topic, partitions),
               lambda: topic in topic_names(ctx) and partitions_of(ctx, topic) == list(range(partitions)), timeout=15)


def produce_all(p, topic, records, partition=0, close=True):
    futures = [p.send(topic, partition=partition, **r) for r in records]
    p.flush(60)
    offsets = [f.get(timeout=60).offset for f in futures]
    if close:
        p.close(10)
    return offsets


def take(c, n, timeout=20):
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < n:
        if time.monotonic() > deadline:
            raise AssertionError("%d of %d records consumed in %.0f s" % (len(got), n, timeout))
        for recs in c.poll(timeout_ms=500).values():
            got.extend(recs)
    got.sort(key=lambda r: (r.partition, r.offset))
    return got


def read_partition(ctx, topic, n, partition=0, offset=None):
    c = consumer(ctx)
    try:
        tp = TopicPartition(topic, partition)
        c.assign([tp])
        if offset is None:
            c.seek_to_beginning(tp)
        else:
            c.seek(tp, offset)
        return take(c, n)
    finally:
        c.close()


def values(n, tag):
    return [("%s value %d " % (tag, i)).encode() + b"x" * (i % 40) for i in range(n)]


def metadata(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 2)
    a = admin(ctx)
    try:
        cluster = a.describe_cluster()
        (t,) = a.describe_topics([topic])
    finally:
        a.close()
    brokers = {b["node_id"]: (b["host"], b["port"]) for b in cluster["brokers"]}
    assert brokers == ctx.brokers, "brokers %s, want %s" % (brokers, ctx.brokers)
    assert cluster["controller_id"] in ctx.brokers, cluster
    parts = sorted(t["partitions"], key=lambda p: p["partition"])
    assert [p["partition"] for p in parts] == [0, 1], parts
    ids = sorted(ctx.brokers)
    for p in parts:
        assert p["leader"] in ids and sorted(p["replicas"]) == ids, p
    return "brokers %s, topic with 2 partitions on all of them" % ids


def create_delete_topics(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 3)
    a = admin(ctx)
    try:
        a.delete_topics([topic], timeout_ms=20000)
    finally:
        a.close()
    wait_until("%s gone" % topic, lambda: topic not in topic_names(ctx), timeout=15)


def produce_acks(acks):
    def scenario(ctx):
        topic = ctx.name()
        # Created first: with acks=0 nothing reports a produce that raced the
        # auto-creation of the topic. And the producer stays open until the
        # records are read back (with acks=0 kafka-python calls a record sent
        # once it is queued for the socket, so closing could drop it).
        create_topic(ctx, topic, 1)
        vals = values(N, topic)
        p = producer(ctx, acks=acks)
        offsets = produce_all(p, topic, [{"value": v} for v in vals], close=False)
        if acks != 0:  # acks=0 gets no offsets back
            assert offsets == list(range(N)), "delivery offsets %s..." % offsets[:5]
        try:
            got = read_partition(ctx, topic, N)
        finally:
            p.close(10)
        assert [r.value for r in got] == vals, "values differ"
        assert [r.offset for r in got] == list(range(N))
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
                     "timestamp_ms": base + i * 1000})
    produce_all(producer(ctx, acks="all"), topic, recs)
    got = read_partition(ctx, topic, len(recs))
    for i, (m, r) in enumerate(zip(got, recs)):
        assert m.key == r["key"], "record %d key %r != %r" % (i, m.key, r["key"])
        assert m.value == r["value"], "record %d value %r != %r" % (i, m.value, r["value"])
        assert list(m.headers) == r["headers"], "record %d headers %r != %r" % (i, m.headers, r["headers"])
        assert (m.timestamp_type, m.timestamp) == (0, r["timestamp_ms"]), \
            "record %d timestamp %s/%s != %d" % (i, m.timestamp_type, m.timestamp, r["timestamp_ms"])


def compression(codec):
    def scenario(ctx):
        topic = ctx.name()
        vals = [v * 20 for v in values(N, topic)]
        produce_all(producer(ctx, acks="all", compression_type=codec, linger_ms=50), topic, [{"value": v} for v in vals])
        got = read_partition(ctx, topic, N)
        assert [r.value for r in got] == vals, "values differ"
        assert [r.offset for r in got] == list(range(N))
    return scenario


def idempotent_produce(ctx):
    topic = ctx.name()
    vals = values(N * 5, topic)
    p = producer(ctx, enable_idempotence=True, acks="all", batch_size=2000, linger_ms=1)
    offsets = produce_all(p, topic, [{"value": v} for v in vals])
    assert offsets == list(range(len(vals))), "delivery offsets out of order"
    got = read_partition(ctx, topic, len(vals))
    assert [r.value for r in got] == vals, "values differ (duplicates or reorder)"
    c = consumer(ctx)
    try:
        tp = TopicPartition(topic, 0)
        end = c.end_offsets([tp])[tp]
    finally:
        c.close()
    assert end == len(vals), "end offset %d, want %d: duplicates" % (end, len(vals))


def wait_assigned(c, timeout=45):
    """Polls a subscribed consumer until the group assigned it something; returns records seen meanwhile."""
    seen = []
    deadline = time.monotonic() + timeout
    while not c.assignment():
        assert time.monotonic() < deadline, "no partitions assigned in %.0f s" % timeout
        for recs in c.poll(timeout_ms=200).values():
            seen.extend(recs)
    return seen


def txn_producer(ctx, txn_id):
    return producer(ctx, transactional_id=txn_id, enable_idempotence=True, acks="all",
                    transaction_timeout_ms=30000)


def txn_send(p, topic, partitions, vals):
    """Sends vals round-robin over the partitions in the open transaction; the futures."""
    return [p.send(topic, value=v, partition=i % partitions) for i, v in enumerate(vals)]


def read_to_end(ctx, topic, partitions, isolation):
    """Every partition from the start with the isolation level until the
    position reaches the end offset (the last stable offset for
    read_committed; the fetcher's position steps over control batches);
    values per partition."""
    c = consumer(ctx, isolation_level=isolation)
    got = [[] for _ in range(partitions)]
    try:
        tps = [TopicPartition(topic, part) for part in range(partitions)]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        end = c.end_offsets(tps)
        deadline = time.monotonic() + 20
        while not all(c.position(tp) >= end[tp] for tp in tps):
            assert time.monotonic() < deadline, "reading %s %s to %s: at %s" % (
                topic, isolation, end, [c.position(tp) for tp in tps])
            for tp, recs in c.poll(timeout_ms=200).items():
                got[tp.partition].extend(r.value for r in recs)
        for tp, recs in c.poll(timeout_ms=300).items():
            got[tp.partition].extend(r.value for r in recs)
    finally:
        c.close()
    return got


FENCED = (kafka.errors.ProducerFencedError, kafka.errors.InvalidProducerEpochError)


def transactions(ctx):
    topic, txn_id = ctx.name(), ctx.name("txn-id")
    create_topic(ctx, topic, 2)
    first, aborted, second = values(10, "commit1"), values(6, "abort"), values(8, "commit2")
    p = txn_producer(ctx, txn_id)
    p.init_transactions()
    p.begin_transaction()
    txn_send(p, topic, 2, first)
    p.commit_transaction()
    p.begin_transaction()
    futures = txn_send(p, topic, 2, aborted)
    p.flush(30)
    for f in futures:
        f.get(timeout=30)  # in the log before the abort
    p.abort_transaction()
    p.begin_transaction()
    txn_send(p, topic, 2, second)
    p.commit_transaction()

    committed = read_to_end(ctx, topic, 2, "read_committed")
    everything = read_to_end(ctx, topic, 2, "read_uncommitted")
    c = consumer(ctx)
    try:
        ends = c.end_offsets([TopicPartition(topic, part) for part in range(2)])
    finally:
        c.close()
    for part in range(2):
        want = first[part::2] + second[part::2]
        assert committed[part] == want, "read_committed partition %d: %d values, want %d" % (
            part, len(committed[part]), len(want))
        want_all = first[part::2] + aborted[part::2] + second[part::2]
        assert everything[part] == want_all, "read_uncommitted partition %d: %d values, want %d" % (
            part, len(everything[part]), len(want_all))
        end = ends[TopicPartition(topic, part)]
        assert end == len(want_all) + 3, "partition %d end offset %d, want %d records + 3 markers" % (
            part, end, len(want_all))

    # A second producer with the same transactional.id fences the first.
    p2 = txn_producer(ctx, txn_id)
    p2.init_transactions()
    error = None
    try:
        p.begin_transaction()
        f = p.send(topic, value=b"fenced", partition=0)
        p.commit_transaction()
        f.get(timeout=30)
    except kafka.errors.KafkaError as e:
        error = e
    assert error is not None, "the fenced producer's transaction committed"
    assert isinstance(error, FENCED), "fenced producer failed with %s: %s" % (type(error).__name__, error)
    p.close(5)
    p2.begin_transaction()
    f = p2.send(topic, value=b"after-fence", partition=0)
    p2.commit_transaction()
    f.get(timeout=30)
    p2.close(5)
    return ("commit 10, abort 6, commit 8 on 2 partitions: read_committed 18, read_uncommitted 24, end offsets "
            "+3 markers each; the same transactional.id fenced the first (%s); the second committed"
            % type(error).__name__)


def transactions_offsets(ctx):
    src, dst, group = ctx.name("in"), ctx.name("out"), ctx.name("group")
    create_topic(ctx, src, 1)
    create_topic(ctx, dst, 1)
    n, first = 10, 6
    produce_all(producer(ctx), src, [{"value": v} for v in values(n, src)])
    tp = TopicPartition(src, 0)
    c = consumer(ctx, group, isolation_level="read_committed")
    p = txn_producer(ctx, ctx.name("txn-id"))
    try:
        c.subscribe([src])
        seen = wait_assigned(c)
        got = seen + take(c, n - len(seen))
        assert [r.value for r in got] == values(n, src), "input read by the group consumer differs"
        p.init_transactions()

        p.begin_transaction()
        txn_send(p, dst, 1, [b"out-" + r.value for r in got[:first]])
        # kafka-python's send_offsets_to_transaction takes the group id, not
        # the consumer's group metadata (generation and member: KIP-447).
        p.send_offsets_to_transaction({tp: OffsetAndMetadata(got[first - 1].offset + 1, "", -1)}, group)
        p.commit_transaction()

        p.begin_transaction()
        futures = txn_send(p, dst, 1, [b"out-" + r.value for r in got[first:]])
        p.flush(30)
        for f in futures:
            f.get(timeout=30)
        p.send_offsets_to_transaction({tp: OffsetAndMetadata(got[-1].offset + 1, "", -1)}, group)
        p.abort_transaction()

        committed = c.committed(tp)
        assert committed == first, "group's committed offset %s after the aborted transaction, want %d" % (
            committed, first)
    finally:
        c.close()
        p.close(5)
    outputs = [b"out-" + v for v in values(n, src)]
    assert read_to_end(ctx, dst, 1, "read_committed")[0] == outputs[:first], "output read_committed differs"
    assert read_to_end(ctx, dst, 1, "read_uncommitted")[0] == outputs, "output read_uncommitted differs"
    return ("group consumer read 10; txn 1 wrote 6 outputs + offset 6 (send_offsets_to_transaction with the "
            "group id), committed; txn 2 wrote 4 + offset 10, aborted: committed() = 6, "
            "output read_committed 6, read_uncommitted 10")


def consume_earliest(ctx):
    topic = ctx.name()
    vals = values(10, topic)
    produce_all(producer(ctx), topic, [{"value": v} for v in vals])
    c = consumer(ctx, ctx.name("g"), auto_offset_reset="earliest")
    try:
        c.subscribe([topic])
        seen = wait_assigned(c)
        got = seen + take(c, len(vals) - len(seen))
    finally:
        c.close()
    assert [r.value for r in got] == vals
    assert got[0].offset == 0


def consume_latest(ctx):
    topic = ctx.name()
    produce_all(producer(ctx), topic, [{"value": b"before %d" % i} for i in range(5)])
    c = consumer(ctx, ctx.name("g"), auto_offset_reset="latest")
    try:
        c.subscribe([topic])
        seen = wait_assigned(c)
        tp = TopicPartition(topic, 0)
        pos = c.position(tp, timeout_ms=10000)  # resolves the reset: positioned at the end
        assert pos == 5, "positioned at %s, want 5" % pos
        after = [b"after %d" % i for i in range(10)]
        produce_all(producer(ctx), topic, [{"value": v} for v in after])
        got = seen + take(c, len(after))
    finally:
        c.close()
    assert [r.value for r in got] == after, [r.value for r in got][:3]
    return "positioned at offset %d" % pos


def consume_timestamp(ctx):
    topic = ctx.name()
    base = int(time.time() * 1000) - 600_000
    produce_all(producer(ctx), topic, [{"value": b"ts %d" % i, "timestamp_ms": base + i * 1000} for i in range(10)])
    c = consumer(ctx)
    try:
        tp = TopicPartition(topic, 0)
        found = c.offsets_for_times({tp: base + 5000})[tp]
        assert found is not None and found.offset == 5, "offsets_for_times(ts of record 5) = %s" % (found,)
        between = c.offsets_for_times({tp: base + 6500})[tp]
        assert between.offset == 7, "offsets_for_times(between 6 and 7) = %s" % (between,)
        c.assign([tp])
        c.seek(tp, found.offset)
        got = take(c, 5)
    finally:
        c.close()
    assert [r.value for r in got] == [b"ts %d" % i for i in range(5, 10)], [r.value for r in got]


def group_of_three(ctx):
    topic, group = ctx.name(), ctx.name("g")
    create_topic(ctx, topic, 6)
    p = producer(ctx)
    for part in range(6):
        for i in range(10):
            p.send(topic, value=b"one %d/%d" % (part, i), partition=part)
    p.flush(30)
    cons = [consumer(ctx, group) for _ in range(3)]
    got = [[] for _ in cons]
    try:
        for c in cons:
            c.subscribe([topic])

        def poll_all(which):
            for i in which:
                for recs in cons[i].poll(timeout_ms=100).values():
                    got[i].extend(recs)

        def stable(which):
            poll_all(which)
            parts = [{tp.partition for tp in cons[i].assignment()} for i in which]
            return all(parts) and sum(len(s) for s in parts) == 6 and set().union(*parts) == set(range(6))

        wait_until("three consumers sharing 6 partitions", lambda: stable([0, 1, 2]), timeout=30, step=0)
        three = [sorted(tp.partition for tp in c.assignment()) for c in cons]
        wait_until("the first 60 records", lambda: poll_all([0, 1, 2]) or
                   len({(r.partition, r.offset) for g in got for r in g}) >= 60, timeout=20, step=0)
        tps = [TopicPartition(topic, x) for x in range(6)]

        def all_committed():
            # A member's commit() can come back having committed nothing
            # (seen on Kafka and on Runnel, one broker or three): poll and
            # commit again until the group's offsets show every record.
            poll_all([0, 1, 2])
            for c in cons:
                c.commit()
            committed = [cons[0].committed(tp) for tp in tps]
            assert committed == [10] * 6, "committed %s" % committed
            return True
        wait_until("commits of 10 on every partition", all_committed, timeout=20, step=0.2)
        before = len(got[0]) + len(got[1])
        cons[2].close()
        wait_until("two consumers taking over 6 partitions", lambda: stable([0, 1]), timeout=30, step=0)
        two = [sorted(tp.partition for tp in c.assignment()) for c in cons[:2]]
        for part in range(6):
            for i in range(10):
                p.send(topic, value=b"two %d/%d" % (part, i), partition=part)
        p.flush(30)
        wait_until("the second 60 records", lambda: poll_all([0, 1]) or
                   sum(1 for g in got[:2] for r in g if r.value.startswith(b"two")) >= 60, timeout=20, step=0)
        again = [r for g in got[:2] for r in g[before:] if r.value.startswith(b"one")]
        seen = {(r.partition, r.value) for g in got for r in g}
        assert len(seen) == 120, "%d distinct records consumed, want 120" % len(seen)
    finally:
        p.close(10)
        for c in cons[:2]:
            c.close()
    assert not again, "%d committed records consumed again after the rebalance" % len(again)
    return "assignments %s then %s" % (three, two)


def offsets_resume(ctx):
    topic, group = ctx.name(), ctx.name("g")
    vals = values(10, topic)
    produce_all(producer(ctx), topic, [{"value": v} for v in vals])
    tp = TopicPartition(topic, 0)
    a = consumer(ctx, group)
    try:
        a.subscribe([topic])
        seen = wait_assigned(a)
        got = seen + take(a, max(0, 4 - len(seen)))
        assert got[3].offset == 3
        a.commit({tp: OffsetAndMetadata(4, "", -1)})
    finally:
        a.close()
    b = consumer(ctx, group)
    try:
        assert b.committed(tp) == 4, "committed offset %s" % b.committed(tp)
        b.subscribe([topic])
        seen = wait_assigned(b)
        got = seen + take(b, max(0, 6 - len(seen)))
    finally:
        b.close()
    assert [r.offset for r in got[:6]] == list(range(4, 10)), "resumed at %d" % got[0].offset
    assert [r.value for r in got[:6]] == vals[4:]


def topic_configs(ctx, topic):
    a = admin(ctx)
    try:
        (resp,) = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        a.close()
    (res,) = resp.resources
    assert res[0] == 0, "DescribeConfigs error %s %s" % (res[0], res[1])
    return {e[0]: e for e in res[4]}  # name -> (name, value, read_only, source, sensitive, synonyms)


def admin_configs(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    entries = topic_configs(ctx, topic)
    assert entries["retention.ms"][1] == "604800000", entries["retention.ms"]
    assert entries["retention.ms"][3] != DYNAMIC_TOPIC_CONFIG, entries["retention.ms"]
    assert entries["cleanup.policy"][1] == "delete"
    a = admin(ctx)
    try:
        # kafka-python has only the non-incremental AlterConfigs.
        resp = a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={"retention.ms": "3600000"})])
    finally:
        a.close()
    assert all(r[0] == 0 for r in resp.resources), resp.resources
    entries = wait_until("retention.ms altered",
                         lambda: (lambda e: e["retention.ms"][1] == "3600000" and e)(topic_configs(ctx, topic)), timeout=10)
    assert entries["retention.ms"][3] == DYNAMIC_TOPIC_CONFIG, entries["retention.ms"]
    return "AlterConfigs"


def admin_grow_partitions(ctx):
    topic = ctx.name()
    create_topic(ctx, topic, 1)
    a = admin(ctx)
    try:
        a.create_partitions({topic: NewPartitions(3)}, timeout_ms=20000)
    finally:
        a.close()
    wait_until("3 partitions in metadata", lambda: partitions_of(ctx, topic) == [0, 1, 2], timeout=15)


def admin_groups(ctx):
    topic, group = ctx.name(), ctx.name("g")
    produce_all(producer(ctx), topic, [{"value": b"x"}])
    c = consumer(ctx, group)
    try:
        c.subscribe([topic])
        wait_assigned(c)
        a = admin(ctx)
        try:
            listed = a.list_consumer_groups()
            assert group in [g[0] for g in listed], "group %s not listed (%d groups)" % (group, len(listed))
            (d,) = a.describe_consumer_groups([group])
        finally:
            a.close()
        assert d.error_code == 0 and d.state == "Stable" and d.protocol_type == "consumer", d[:5]
        assert len(d.members) == 1, d.members
        return "ListGroups + DescribeGroups: %s/%s, member %s" % (d.state, d.protocol, d.members[0].client_id)
    finally:
        c.close()


def admin_delete_records(ctx):
    topic = ctx.name()
    vals = values(10, topic)
    produce_all(producer(ctx), topic, [{"value": v} for v in vals])
    tp = TopicPartition(topic, 0)
    a = admin(ctx)
    try:
        res = a.delete_records({tp: 6}, timeout_ms=20000)
    finally:
        a.close()
    low = list(res.values())[0]
    low = low.get("low_watermark") if isinstance(low, dict) else low
    assert low == 6, "DeleteRecords low watermark %s" % (low,)
    c = consumer(ctx)
    try:
        assert c.beginning_offsets([tp])[tp] == 6, "earliest offset %s" % c.beginning_offsets([tp])[tp]
        c.assign([tp])
        c.seek_to_beginning(tp)
        got = take(c, 4)
    finally:
        c.close()
    assert got[0].offset == 6 and [r.value for r in got] == vals[6:]


FAILOVER_BEFORE = 100  # records acknowledged before the kill is asked for
FAILOVER_AFTER = 100   # records acknowledged after a new leader is named


def partition0(a, topic):
    (t,) = [t for t in a.describe_topics([topic]) if t["topic"] == topic]
    (p,) = [p for p in t["partitions"] if p["partition"] == 0]
    return p["leader"], sorted(p["isr"])


def leader_failover(ctx):
    """The README's leader_failover: kafka-python's idempotent acks=all
    producer and an assigned consumer, one poll after each send."""
    topic = ctx.name()
    ids = sorted(ctx.brokers)
    create_topic(ctx, topic, 1)
    a = admin(ctx)
    p = producer(ctx, acks="all", enable_idempotence=True, linger_ms=1, delivery_timeout_ms=80000)
    c = consumer(ctx)
    sent, acked, errors, consumed = [], {}, [], []
    try:
        wait_until("%s's full ISR" % topic, lambda: partition0(a, topic)[1] == ids, timeout=30)
        old = partition0(a, topic)[0]
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek_to_beginning(tp)

        def step():
            v = b"%s-%06d" % (topic.encode(), len(sent))
            sent.append(v)
            f = p.send(topic, value=v, partition=0)
            f.add_callback(lambda md, v=v: acked.__setitem__(v, md.offset))
            f.add_errback(lambda e: errors.append(repr(e)))
            for recs in c.poll(timeout_ms=5).values():
                consumed.extend(recs)

        new = feed_through_failover(ctx, topic, step, lambda: len(acked), lambda: partition0(a, topic)[0], old,
                                    FAILOVER_BEFORE, FAILOVER_AFTER, "acknowledged",
                                    errors=lambda: ", errors %s" % errors[:3], every=0.25)
        p.flush(60)
        deadline = time.monotonic() + 30
        while len(consumed) < len(sent) and time.monotonic() < deadline:
            for recs in c.poll(timeout_ms=200).values():
                consumed.extend(recs)
    finally:
        p.close(10)
        c.close()
        a.close()
    assert not errors, "%d delivery errors: %s" % (len(errors), errors[:3])
    assert len(acked) == len(sent), "%d of %d acknowledged" % (len(acked), len(sent))
    assert [r.value for r in consumed] == sent, "consumed %d records, sent %d (lost, duplicated or reordered)" % (
        len(consumed), len(sent))
    assert [r.offset for r in consumed] == [acked[v] for v in sent], "acknowledged offsets differ from consumed ones"
    return "%d records, leader %d killed, %d took over: all acknowledged and consumed once, in order" % (
        len(sent), old, new)


class LastConnectionError(logging.Handler):
    """The last error kafka-python logged about a connection: its exception
    says only "Connection to N failed", the log line why it closed."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.message = None

    def emit(self, record):
        self.message = record.getMessage().split(">: ", 1)[-1]


def security_round_trip(ctx):
    """A security column (ctx.security), over its listener only (see
    secure_round_trip); a connection failure names the connection's last
    logged error."""
    why = LastConnectionError()
    log = logging.getLogger("kafka.conn")
    log.addHandler(why)
    try:
        return secure_round_trip(ctx)
    except kafka.errors.KafkaConnectionError as e:
        if why.message:
            raise kafka.errors.KafkaConnectionError("%s (last logged: %s)" % (e, why.message)) from e
        raise
    finally:
        log.removeHandler(why)


def secure_round_trip(ctx):
    """The admin client creates a topic (2 partitions) and metadata shows it,
    the broker advertised on this listener; acks=all produce; a group
    consumes every record exactly and commits; the committed offsets read
    back, by the consumer and by the admin client, which lists the group."""
    topic, group = ctx.name(), ctx.name("group")
    create_topic(ctx, topic, 2)
    a = admin(ctx)
    try:
        ports = sorted({b["port"] for b in a.describe_cluster()["brokers"]})
    finally:
        a.close()
    assert ports == [ctx.port], "brokers advertised on ports %s, not the column's %d" % (ports, ctx.port)
    sent = {part: values(SECURE_N, "%s p%d" % (ctx.scenario, part)) for part in (0, 1)}
    p = producer(ctx)
    for part, vals in sent.items():
        offsets = produce_all(p, topic, [{"value": v} for v in vals], partition=part, close=False)
        assert offsets == list(range(SECURE_N)), "partition %d offsets %s" % (part, offsets)
    p.close(10)
    tps = [TopicPartition(topic, part) for part in (0, 1)]
    c = consumer(ctx, group)
    try:
        c.subscribe([topic])
        got = take(c, 2 * SECURE_N, timeout=40)
        by_part = {part: [m.value for m in got if m.partition == part] for part in (0, 1)}
        assert by_part == sent, "consumed %s" % {k: len(v) for k, v in by_part.items()}
        c.commit()
        assert [c.committed(tp) for tp in tps] == [SECURE_N, SECURE_N], [c.committed(tp) for tp in tps]
    finally:
        c.close()
    a = admin(ctx)
    try:
        assert group in [g[0] for g in a.list_consumer_groups()], "group %s not listed" % group
        offsets = a.list_consumer_group_offsets(group)
    finally:
        a.close()
    assert {tp: offsets[tp].offset for tp in tps} == {tp: SECURE_N for tp in tps}, offsets
    return "%s: %d records over %s, committed %d+%d, group listed" % (
        ctx.security["listener"], 2 * SECURE_N, ctx.security["security_protocol"], SECURE_N, SECURE_N)


SECURE_N = 20  # records per partition in a security column


def scenarios():
    return dict({sid: security_round_trip for sid in SECURITY_COLUMNS}, **{
        "metadata": metadata,
        "create_delete_topics": create_delete_topics,
        "produce_acks0": produce_acks(0),
        "produce_acks1": produce_acks(1),
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
    })


def versions():
    return "kafka-python %s" % kafka.__version__
