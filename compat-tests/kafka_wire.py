"""Kafka request and response bytes built by hand from the protocol's
documented layouts (kafka.apache.org/protocol), for tests that must send
what no client library would: only the few messages and versions the
bad-input, idempotence and compression tests need, all non-flexible except
where noted.
"""

import socket
import struct


# -- primitives ---------------------------------------------------------------

def i8(v):
    return struct.pack(">b", v)


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


def string(s):
    """STRING / NULLABLE_STRING: int16 length, -1 for null."""
    if s is None:
        return i16(-1)
    b = s.encode() if isinstance(s, str) else s
    return i16(len(b)) + b


def bytes_(b):
    """BYTES / NULLABLE_BYTES: int32 length, -1 for null."""
    if b is None:
        return i32(-1)
    return i32(len(b)) + b


def array(items):
    return i32(len(items)) + b"".join(items)


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def compact_string(s):
    """A flexible version's (nullable) string: length + 1 as an unsigned varint."""
    if s is None:
        return uvarint(0)
    b = s.encode()
    return uvarint(len(b) + 1) + b


def compact_array(items):
    """A flexible version's array of already encoded items."""
    return uvarint(len(items) + 1) + b"".join(items)


TAGS = b"\x00"  # a flexible structure's empty tagged fields


def varint(v):
    """Zigzag varint (varlong too: Python ints are unbounded)."""
    return uvarint((v << 1) ^ (v >> 63))


# -- CRC-32C (Castagnoli), as RecordBatch v2 uses ------------------------------

def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# -- RecordBatch v2 -------------------------------------------------------------

def record(offset_delta, timestamp_delta, key, value, headers=()):
    body = i8(0) + varint(timestamp_delta) + varint(offset_delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(len(headers))
    for hk, hv in headers:
        hk = hk.encode()
        body += varint(len(hk)) + hk
        body += varint(-1) if hv is None else varint(len(hv)) + hv
    return varint(len(body)) + body


def record_batch(records, base_timestamp, crc_xor=0, timestamp_deltas=None):
    """An uncompressed v2 batch of (key, value, headers) at CreateTime
    base_timestamp + i (or + timestamp_deltas[i]); crc_xor != 0 breaks the
    CRC on purpose."""
    deltas = list(range(len(records))) if timestamp_deltas is None else timestamp_deltas
    recs = b"".join(record(i, deltas[i], k, v, h) for i, (k, v, h) in enumerate(records))
    after_crc = (i16(0)                              # attributes: no codec, CreateTime
                 + i32(len(records) - 1)             # lastOffsetDelta
                 + i64(base_timestamp)
                 + i64(base_timestamp + max(deltas))
                 + i64(-1) + i16(-1) + i32(-1)       # producerId, producerEpoch, baseSequence
                 + i32(len(records)) + recs)
    crc = crc32c(after_crc) ^ crc_xor
    after_length = i32(0) + i8(2) + struct.pack(">I", crc) + after_crc  # partitionLeaderEpoch, magic
    return i64(0) + i32(len(after_length)) + after_length


CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
INT32_MAX = 0x7FFFFFFF


def producer_batch(records, base_timestamp, producer_id, producer_epoch, base_sequence,
                   codec=0, transactional=False, payload=None):
    """A v2 batch of (key, value, headers) carrying producer id, epoch and
    base sequence; `codec` sets attribute bits 0-2 and `payload` (already in
    that codec, or garbage on purpose) replaces the records, under a valid
    CRC either way."""
    if payload is None:
        payload = b"".join(record(i, i, k, v, h) for i, (k, v, h) in enumerate(records))
    attributes = codec | (0x10 if transactional else 0)
    after_crc = (i16(attributes) + i32(len(records) - 1)
                 + i64(base_timestamp) + i64(base_timestamp + len(records) - 1)
                 + i64(producer_id) + i16(producer_epoch) + i32(base_sequence)
                 + i32(len(records)) + payload)
    after_length = i32(0) + i8(2) + struct.pack(">I", crc32c(after_crc)) + after_crc
    return i64(0) + i32(len(after_length)) + after_length


def batch_header(batch):
    """The fields of a stored v2 batch's header (PROTOCOL-NOTES section 3)."""
    (base_offset, length, leader_epoch, magic, crc, attributes, last_delta, base_ts, max_ts,
     producer_id, producer_epoch, base_sequence, count) = struct.unpack(">qiibIhiqqqhii", batch[:61])
    return {"base_offset": base_offset, "length": length, "leader_epoch": leader_epoch, "magic": magic, "crc": crc,
            "attributes": attributes, "codec": attributes & 7, "last_offset_delta": last_delta,
            "base_timestamp": base_ts, "max_timestamp": max_ts,
            "producer_id": producer_id, "producer_epoch": producer_epoch,
            "base_sequence": base_sequence, "records_count": count, "payload": batch[61:12 + length]}


def split_batches(records):
    """A Fetch response's records bytes -> whole v2 batches (a partial one at the end is dropped)."""
    out, pos = [], 0
    while pos + 12 <= len(records):
        (length,) = struct.unpack(">i", records[pos + 8:pos + 12])
        if pos + 12 + length > len(records):
            break
        out.append(records[pos:pos + 12 + length])
        pos += 12 + length
    return out


# -- requests -------------------------------------------------------------------

def request(api_key, version, correlation_id, body, client_id="runnel-compat", flexible=False):
    """A whole frame: size, request header v1 (v2 when flexible), body."""
    header = i16(api_key) + i16(version) + i32(correlation_id) + string(client_id)
    if flexible:
        header += uvarint(0)  # no tagged fields
    payload = header + body
    return i32(len(payload)) + payload


def api_versions_v0(correlation_id):
    return request(18, 0, correlation_id, b"")


def metadata_v1(correlation_id, topics=None):
    body = i32(-1) if topics is None else array([string(t) for t in topics])
    return request(3, 1, correlation_id, body)


def metadata_v7(correlation_id, topics=None, allow_auto_topic_creation=False):
    """v7 adds each partition's leader epoch (KIP-320); still not flexible."""
    body = i32(-1) if topics is None else array([string(t) for t in topics])
    return request(3, 7, correlation_id, body + i8(1 if allow_auto_topic_creation else 0))


def create_topics_v4(correlation_id, topics, timeout_ms=10000, validate_only=False):
    """topics: [(name, partitions, replication_factor)] or
    [(name, partitions, replication_factor, {config: value})]."""
    def configs(t):
        return array([string(k) + string(v) for k, v in (t[3] if len(t) > 3 else {}).items()])
    items = [string(t[0]) + i32(t[1]) + i16(t[2]) + array([]) + configs(t) for t in topics]
    body = array(items) + i32(timeout_ms) + i8(1 if validate_only else 0)
    return request(19, 4, correlation_id, body)


def create_partitions_v1(correlation_id, topics, timeout_ms=10000, validate_only=False):
    """topics: [(name, new total count)], no manual assignments."""
    items = [string(n) + i32(count) + i32(-1) for n, count in topics]
    body = array(items) + i32(timeout_ms) + i8(1 if validate_only else 0)
    return request(37, 1, correlation_id, body)


def produce_v8(correlation_id, acks, topic_partitions, timeout_ms=30000):
    """topic_partitions: {topic: [(partition, batch bytes)]}."""
    topics = [string(t) + array([i32(p) + bytes_(b) for p, b in parts]) for t, parts in topic_partitions.items()]
    body = string(None) + i16(acks) + i32(timeout_ms) + array(topics)
    return request(0, 8, correlation_id, body)


def fetch_v4(correlation_id, topic, partition, offset, max_wait_ms=5000, min_bytes=1):
    return fetch_v4_many(correlation_id, [(topic, [(partition, offset, 1 << 20)])], max_wait_ms, min_bytes)


def fetch_v4_many(correlation_id, topics, max_wait_ms=5000, min_bytes=1, max_bytes=50 << 20):
    """topics: [(topic, [(partition, offset, partition_max_bytes)])], in
    request order; a topic or partition may be named more than once."""
    items = [string(t) + array([i32(p) + i64(o) + i32(m) for p, o, m in parts]) for t, parts in topics]
    body = i32(-1) + i32(max_wait_ms) + i32(min_bytes) + i32(max_bytes) + i8(0) + array(items)
    return request(1, 4, correlation_id, body)


def find_coordinator_v1(correlation_id, key, key_type):
    """v1 adds the key type (0 group, 1 transaction) to v0's single key."""
    return request(10, 1, correlation_id, string(key) + i8(key_type))


def find_coordinator_v4(correlation_id, keys, key_type):
    """v4+ (flexible) asks for a batch of keys of one type."""
    body = i8(key_type) + uvarint(len(keys) + 1)
    body += b"".join(uvarint(len(k) + 1) + k.encode() for k in keys) + uvarint(0)
    return request(10, 4, correlation_id, body, flexible=True)


def describe_cluster_v0(correlation_id):
    """DescribeCluster v0 (flexible): no authorized operations asked for."""
    return request(60, 0, correlation_id, i8(0) + uvarint(0), flexible=True)


def init_producer_id_v0(correlation_id, transactional_id=None, timeout_ms=60000):
    return request(22, 0, correlation_id, string(transactional_id) + i32(timeout_ms))


def init_producer_id_v4(correlation_id, producer_id=-1, producer_epoch=-1, transactional_id=None,
                        timeout_ms=60000):
    """v3+ names the producer's current id and epoch (KIP-360); v2+ is flexible."""
    tid = uvarint(0) if transactional_id is None else uvarint(len(transactional_id) + 1) + transactional_id.encode()
    body = tid + i32(timeout_ms) + i64(producer_id) + i16(producer_epoch) + uvarint(0)
    return request(22, 4, correlation_id, body, flexible=True)


def list_offsets_v1(correlation_id, topic, partitions, timestamp=-1, replica_id=-1):
    """timestamp -1 latest (the log end offset here), -2 earliest. replica_id
    -2 is Kafka's debugging id: a follower answers too, from its own log."""
    body = i32(replica_id) + array([string(topic) + array([i32(p) + i64(timestamp) for p in partitions])])
    return request(2, 1, correlation_id, body)


def delete_records_v1(correlation_id, topic, partition_offsets, timeout_ms=10000):
    """partition_offsets: [(partition, offset)]: delete the records before offset."""
    body = array([string(topic) + array([i32(p) + i64(o) for p, o in partition_offsets])]) + i32(timeout_ms)
    return request(21, 1, correlation_id, body)


# -- responses ------------------------------------------------------------------

class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("response truncated at %d (+%d of %d)" % (self.pos, n, len(self.data)))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def i8(self):
        return struct.unpack(">b", self.take(1))[0]

    def i16(self):
        return struct.unpack(">h", self.take(2))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def i64(self):
        return struct.unpack(">q", self.take(8))[0]

    def uvarint(self):
        v = shift = 0
        while True:
            b = self.take(1)[0]
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode()

    def compact_string(self):
        """A flexible version's (nullable) string: length + 1 as an unsigned varint."""
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def skip_tags(self):
        """A flexible version's tagged fields, none of which the tests read."""
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())

    def array(self, item):
        n = self.i32()
        return None if n < 0 else [item(self) for _ in range(n)]

    def compact_array(self, item):
        n = self.uvarint()
        return None if n == 0 else [item(self) for _ in range(n - 1)]

    def done(self):
        return self.pos == len(self.data)


def parse_api_versions_v0(body):
    """-> (error_code, [(key, min, max)])"""
    r = Reader(body)
    err = r.i16()
    keys = r.array(lambda r: (r.i16(), r.i16(), r.i16()))
    assert r.done(), "trailing bytes in ApiVersions v0 response"
    return err, keys


def parse_metadata_v1_topics(body):
    """-> {name: (error_code, [partition ids])}"""
    r = Reader(body)
    r.array(lambda r: (r.i32(), r.string(), r.i32(), r.string()))  # brokers
    r.i32()  # controller id
    out = {}

    def partition(r):
        err, pid, leader = r.i16(), r.i32(), r.i32()
        r.array(lambda r: r.i32())
        r.array(lambda r: r.i32())
        return pid

    def topic(r):
        err, name, internal = r.i16(), r.string(), r.i8()
        out[name] = (err, r.array(partition))

    r.array(topic)
    assert r.done(), "trailing bytes in Metadata v1 response"
    return out


def parse_metadata_v7(body):
    """-> {"brokers": {node_id: (host, port, rack)}, "cluster_id", "controller_id",
    "topics": {name: {"error": code, "internal": bool, "partitions":
    {index: {"error", "leader", "leader_epoch", "replicas", "isr", "offline"}}}}}"""
    r = Reader(body)
    r.i32()  # throttle
    brokers = {}
    for node_id, host, port, rack in r.array(lambda r: (r.i32(), r.string(), r.i32(), r.string())):
        brokers[node_id] = (host, port, rack)
    cluster_id = r.string()
    controller_id = r.i32()

    def ints(r):
        return r.array(lambda r: r.i32())

    def partition(r):
        err, index, leader, epoch = r.i16(), r.i32(), r.i32(), r.i32()
        return index, {"error": err, "leader": leader, "leader_epoch": epoch,
                       "replicas": ints(r), "isr": ints(r), "offline": ints(r)}

    def topic(r):
        err, name, internal = r.i16(), r.string(), r.i8()
        return name, {"error": err, "internal": bool(internal), "partitions": dict(r.array(partition))}

    topics = dict(r.array(topic))
    assert r.done(), "trailing bytes in Metadata v7 response"
    return {"brokers": brokers, "cluster_id": cluster_id, "controller_id": controller_id, "topics": topics}


def parse_describe_cluster_v0(body):
    """-> {"error", "cluster_id", "controller_id", "brokers": {id: (host, port, rack)}};
    `body` starts with the flexible response header's tagged fields."""
    r = Reader(body)
    tags, compact_string = r.skip_tags, r.compact_string
    tags()
    r.i32()  # throttle
    error = r.i16()
    compact_string()  # error message
    cluster_id, controller_id = compact_string(), r.i32()
    brokers = {}
    for _ in range(r.uvarint() - 1):
        node_id, host, port, rack = r.i32(), compact_string(), r.i32(), compact_string()
        tags()
        brokers[node_id] = (host, port, rack)
    r.i32()  # cluster authorized operations
    tags()
    assert r.done(), "trailing bytes in DescribeCluster v0 response"
    return {"error": error, "cluster_id": cluster_id, "controller_id": controller_id, "brokers": brokers}


def _parse_named_results(body, what):
    """throttle, then [(name, error_code, error_message)], as CreateTopics v4
    and CreatePartitions v1 answer."""
    r = Reader(body)
    r.i32()  # throttle
    results = r.array(lambda r: (r.string(), r.i16(), r.string()))
    assert r.done(), "trailing bytes in %s response" % what
    return results


def parse_create_topics_v4(body):
    """-> [(name, error_code, error_message)]"""
    return _parse_named_results(body, "CreateTopics v4")


def parse_create_partitions_v1(body):
    """-> [(name, error_code, error_message)]"""
    return _parse_named_results(body, "CreatePartitions v1")


def read_partitions(r, partition):
    """The topics array every per-partition response shares: a name, then
    partitions each starting with its index. partition(r) reads the rest of
    one partition and returns its value. -> {(topic, index): value}"""
    out = {}

    def topic(r):
        name = r.string()

        def one(r):
            index = r.i32()
            out[(name, index)] = partition(r)
        r.array(one)

    r.array(topic)
    return out


def parse_produce_v8(body, detail=False):
    """-> {(topic, partition): (error_code, base_offset, error_message)};
    with detail, (error_code, base_offset, error_message, log_start_offset,
    [(batch_index, batch_index_error_message)])."""
    r = Reader(body)

    def partition(r):
        err, base = r.i16(), r.i64()
        r.i64()  # log append time
        log_start = r.i64()
        record_errors = r.array(lambda r: (r.i32(), r.string()))
        message = r.string()
        return (err, base, message, log_start, record_errors) if detail else (err, base, message)

    out = read_partitions(r, partition)
    r.i32()  # throttle
    assert r.done(), "trailing bytes in Produce v8 response"
    return out


def parse_init_producer_id(body, flexible=False):
    """-> (error_code, producer_id, producer_epoch); flexible for v2+ (response header v1)."""
    r = Reader(body)
    if flexible:
        assert r.i8() == 0, "tagged fields in the response header"
    r.i32()  # throttle
    out = (r.i16(), r.i64(), r.i16())
    if flexible:
        assert r.i8() == 0, "tagged fields in the response body"
    assert r.done(), "trailing bytes in InitProducerId response"
    return out


def parse_list_offsets_v1(body):
    """-> {(topic, partition): (error_code, offset)}"""
    r = Reader(body)

    def partition(r):
        err = r.i16()
        r.i64()  # timestamp
        return err, r.i64()

    out = read_partitions(r, partition)
    assert r.done(), "trailing bytes in ListOffsets v1 response"
    return out


def parse_fetch_v4(body):
    """-> {(topic, partition): (error_code, high_watermark, records bytes)}"""
    r = Reader(body)
    r.i32()  # throttle

    def partition(r):
        err, hw = r.i16(), r.i64()
        r.i64()  # last stable offset
        r.array(lambda r: (r.i64(), r.i64()))  # aborted transactions
        n = r.i32()
        return err, hw, b"" if n < 0 else r.take(n)

    out = read_partitions(r, partition)
    assert r.done(), "trailing bytes in Fetch v4 response"
    return out


def parse_fetch_v4_in_order(body):
    """-> [(topic, partition, error_code, high_watermark, records bytes)], as
    sent (parse_fetch_v4's dict would hide a partition answered twice)."""
    r = Reader(body)
    r.i32()  # throttle
    out = []

    def topic(r):
        name = r.string()

        def partition(r):
            index, err, hw = r.i32(), r.i16(), r.i64()
            r.i64()  # last stable offset
            r.array(lambda r: (r.i64(), r.i64()))  # aborted transactions
            n = r.i32()
            out.append((name, index, err, hw, r.take(max(n, 0))))
        r.array(partition)

    r.array(topic)
    assert r.done(), "trailing bytes in Fetch v4 response"
    return out


def parse_find_coordinator_v1(body):
    """-> (error_code, error_message, node_id)"""
    r = Reader(body)
    r.i32()  # throttle
    err, message, node = r.i16(), r.string(), r.i32()
    r.string()  # host
    r.i32()  # port
    assert r.done(), "trailing bytes in FindCoordinator v1 response"
    return err, message, node


def parse_find_coordinator_v4(body):
    """-> [(key, node_id, error_code, error_message)] (response header v1)."""
    r = Reader(body)
    assert r.i8() == 0, "tagged fields in the response header"
    r.i32()  # throttle

    def compact_string(r):
        n = r.uvarint() - 1
        return None if n < 0 else r.take(n).decode()

    out = []
    for _ in range(r.uvarint() - 1):
        key, node = compact_string(r), r.i32()
        compact_string(r)  # host
        r.i32()  # port
        err, message = r.i16(), compact_string(r)
        assert r.i8() == 0, "tagged fields in a coordinator"
        out.append((key, node, err, message))
    assert r.i8() == 0, "tagged fields in the response body"
    assert r.done(), "trailing bytes in FindCoordinator v4 response"
    return out


def parse_delete_records_v1(body):
    """-> {(topic, partition): (error_code, low_watermark)}"""
    r = Reader(body)
    r.i32()  # throttle

    def partition(r):
        low = r.i64()
        return r.i16(), low

    out = read_partitions(r, partition)
    assert r.done(), "trailing bytes in DeleteRecords v1 response"
    return out


# -- a connection ---------------------------------------------------------------

# -- flexible Fetch (v12 by name, v13 by topic id) and Metadata v12 -----------

def metadata_v12(corr, topics):
    """Flexible Metadata, with topic ids (v10+); no auto-creation."""
    body = compact_array([bytes(16) + compact_string(t) + TAGS for t in topics]) + i8(0) + i8(0) + TAGS
    return request(3, 12, corr, body, flexible=True)


def topic_ids(conn, topics):
    """{name: topic id bytes} from Metadata v12 on `conn`."""
    r = Reader(conn.call(metadata_v12(1, topics), 1))
    r.skip_tags()
    r.i32()
    r.compact_array(lambda r: (r.i32(), r.compact_string(), r.i32(), r.compact_string(), r.skip_tags()))
    r.compact_string()
    r.i32()
    out = {}

    def topic(r):
        err, name, tid = r.i16(), r.compact_string(), r.take(16)
        r.i8()
        r.compact_array(lambda r: (r.i16(), r.i32(), r.i32(), r.i32(), r.compact_array(lambda r: r.i32()),
                                   r.compact_array(lambda r: r.i32()), r.compact_array(lambda r: r.i32()),
                                   r.skip_tags()))
        r.i32()
        r.skip_tags()
        assert err == 0, (name, err)
        out[name] = tid
    r.compact_array(topic)
    return out


def fetch_flexible(version, corr, session_id, epoch, topics, forgotten=(), max_wait_ms=0, max_bytes=50 << 20):
    """Fetch v12 or v13. topics: [(name or topic id, [(partition, offset)])];
    forgotten: [(name or topic id, [partitions])]."""
    def topic_ref(t):
        return t if version >= 13 else compact_string(t)

    def partition(p, offset):
        return i32(p) + i32(-1) + i64(offset) + i32(-1) + i64(-1) + i32(1 << 20) + TAGS
    items = [topic_ref(t) + compact_array([partition(p, o) for p, o in parts]) + TAGS for t, parts in topics]
    gone = [topic_ref(t) + compact_array([i32(p) for p in parts]) + TAGS for t, parts in forgotten]
    body = (i32(-1) + i32(max_wait_ms) + i32(1) + i32(max_bytes) + i8(0) + i32(session_id) + i32(epoch) +
            compact_array(items) + compact_array(gone) + compact_string("") + TAGS)
    return request(1, version, corr, body, flexible=True)


def parse_fetch_flexible(version, body):
    """-> (error_code, session_id, [(topic, partition, error, high watermark, records bytes)])"""
    r = Reader(body)
    r.skip_tags()
    r.i32()  # throttle
    err, session = r.i16(), r.i32()
    out = []

    def topic(r):
        name = r.take(16) if version >= 13 else r.compact_string()

        def partition(r):
            index, perr, hw = r.i32(), r.i16(), r.i64()
            r.i64()  # last stable offset
            r.i64()  # log start offset
            r.compact_array(lambda r: (r.i64(), r.i64(), r.skip_tags()))
            r.i32()  # preferred read replica
            n = r.uvarint()
            records = b"" if n == 0 else r.take(n - 1)
            r.skip_tags()
            out.append((name, index, perr, hw, records))
        r.compact_array(partition)
        r.skip_tags()
    r.compact_array(topic)
    r.skip_tags()
    assert r.done(), "trailing bytes in the Fetch response"
    return err, session, out


class Connection:
    def __init__(self, port, timeout=15.0, host="127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=timeout)

    def send(self, data):
        self.sock.sendall(data)

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed by the broker after %d of %d bytes" % (len(buf), n))
            buf += chunk
        return buf

    def response(self, correlation_id):
        """The next response's body (after a v0 response header)."""
        (size,) = struct.unpack(">i", self.recv_exact(4))
        frame = self.recv_exact(size)
        (corr,) = struct.unpack(">i", frame[:4])
        assert corr == correlation_id, "correlation id %d, expected %d" % (corr, correlation_id)
        return frame[4:]

    def call(self, frame, correlation_id):
        self.send(frame)
        return self.response(correlation_id)

    def expect_closed(self, what, timeout=15.0):
        """The broker must close the connection (EOF or reset) without answering."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            return
        except socket.timeout:
            raise AssertionError("%s: the connection is still open after %.0f s" % (what, timeout))
        assert data == b"", "%s: expected the connection closed, got %d bytes: %r" % (what, len(data), data[:64])

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def alter_client_quotas_v1(corr, entries, validate_only=False):
    """AlterClientQuotas v1 (flexible): entries of ([(type, name)], [(key, value or None)])."""
    def entity(parts):
        return compact_array([compact_string(t) + compact_string(n) + uvarint(0) for t, n in parts])

    def ops(items):
        return compact_array([compact_string(k) + struct.pack(">d", 0.0 if v is None else v) +
                              i8(1 if v is None else 0) + uvarint(0) for k, v in items])

    body = compact_array([entity(e) + ops(o) + uvarint(0) for e, o in entries])
    body += i8(1 if validate_only else 0) + uvarint(0)
    return request(49, 1, corr, body, flexible=True)


def parse_alter_client_quotas_v1(body):
    """[(error_code, error_message, {type: name})], after the response header's tags."""
    r = Reader(body)
    r.skip_tags()  # response header v1
    r.i32()  # throttle_time_ms

    def entry(r):
        code, message = r.i16(), r.compact_string()
        parts = {}
        for _ in range(r.uvarint() - 1):
            t, n = r.compact_string(), r.compact_string()
            r.skip_tags()
            parts[t] = n
        r.skip_tags()
        return code, message, parts

    out = r.compact_array(entry)
    r.skip_tags()
    assert r.done(), "bytes left after AlterClientQuotas response"
    return out


def read_batches(port, topic, partition=0, limit=100000):
    """[(base offset, batch bytes)] of a whole partition, in log order,
    through Fetch v4 from offset 0; asserts every Fetch answers NONE."""
    out, offset = [], 0
    with Connection(port) as c:
        for corr in range(1, limit):
            [(err, _, records)] = parse_fetch_v4(
                c.call(fetch_v4(corr, topic, partition, offset, max_wait_ms=0), corr)).values()
            assert err == 0, "Fetch %s-%d at %d: error %d" % (topic, partition, offset, err)
            batches = split_batches(records)
            if not batches:
                return out
            for batch in batches:
                h = batch_header(batch)
                out.append((h["base_offset"], batch))
                offset = h["base_offset"] + h["last_offset_delta"] + 1
    raise AssertionError("%s-%d: more than %d fetches" % (topic, partition, limit))
