#!/usr/bin/python3
"""Admin APIs against a real Runnel process.

    /usr/bin/python3 admin_test.py <path to runnel>

Starts its own broker (runnel_harness.py: a free loopback port, a fresh data dir), drives
CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs,
DeleteRecords, DescribeCluster, OffsetForLeaderEpoch and DescribeLogDirs
(and Metadata's authorized operations),
and stops the broker by pid. The librdkafka Admin API (confluent-kafka
1.7.0) covers what it offers (configs, partitions); the APIs it lacks are
sent as hand-encoded requests at every version Runnel serves. Every wait is
bounded. Each step stops at its first failed check; exits non-zero if any
step failed and prints one line per step and a summary line.
"""
import os
import socket
import struct
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewPartitions, NewTopic

from runnel_harness import Runnel, run_tests

CHECKS = 0


def check(cond, what):
    global CHECKS
    CHECKS += 1
    if not cond:
        raise AssertionError(what)


def eq(got, want, what):
    check(got == want, f"{what}: got {got!r}, want {want!r}")


# ------------------------------------------------- a small Kafka codec
# Schemas: lists of (name, type, first version). Types: i8 i16 i32 i64 bool
# str nstr, ("arr", schema), ("narr", schema), ("arr", "i32"), ("arr", "str"),
# ("narr", "str").


def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def enc_str(s, flex, nullable):
    if s is None:
        check(nullable, "null for a non-nullable string")
        return uvarint(0) if flex else struct.pack(">h", -1)
    b = s.encode()
    return (uvarint(len(b) + 1) if flex else struct.pack(">h", len(b))) + b


def encode(schema, obj, v, flex):
    out = bytearray()
    for name, typ, since in schema:
        if v < since:
            continue
        val = obj[name]
        out += enc_value(typ, val, v, flex)
    if flex:
        out += uvarint(0)
    return bytes(out)


def enc_value(typ, val, v, flex):
    if typ == "i8":
        return struct.pack(">b", val)
    if typ == "i16":
        return struct.pack(">h", val)
    if typ == "i32":
        return struct.pack(">i", val)
    if typ == "i64":
        return struct.pack(">q", val)
    if typ == "bool":
        return struct.pack(">?", val)
    if isinstance(typ, str):
        return enc_str(val, flex, typ == "nstr")
    kind, elem = typ
    if val is None:
        check(kind == "narr", "null for a non-nullable array")
        return uvarint(0) if flex else struct.pack(">i", -1)
    head = uvarint(len(val) + 1) if flex else struct.pack(">i", len(val))
    body = b"".join(encode(elem, e, v, flex) if isinstance(elem, list) else enc_value(elem, e, v, flex) for e in val)
    return head + body


class Reader:
    def __init__(self, data):
        self.d, self.i = data, 0

    def take(self, n):
        check(self.i + n <= len(self.d), "response truncated")
        b = self.d[self.i:self.i + n]
        self.i += n
        return b

    def uvarint(self):
        n = shift = 0
        while True:
            b = self.take(1)[0]
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n

    def skip_tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())


def decode(schema, r, v, flex):
    obj = {}
    for name, typ, since in schema:
        if v >= since:
            obj[name] = dec_value(typ, r, v, flex)
    if flex:
        r.skip_tags()
    return obj


def dec_value(typ, r, v, flex):
    fmt = {"i8": ">b", "i16": ">h", "i32": ">i", "i64": ">q", "bool": ">?"}
    if isinstance(typ, str) and typ in fmt:
        return struct.unpack(fmt[typ], r.take(struct.calcsize(fmt[typ])))[0]
    if isinstance(typ, str):
        n = r.uvarint() - 1 if flex else struct.unpack(">h", r.take(2))[0]
        return None if n < 0 else r.take(n).decode()
    kind, elem = typ
    n = r.uvarint() - 1 if flex else struct.unpack(">i", r.take(4))[0]
    if n < 0:
        return None
    return [decode(elem, r, v, flex) if isinstance(elem, list) else dec_value(elem, r, v, flex) for _ in range(n)]


# key: (name, flexible from, request schema, response schema)
APIS = {
    21: ("DeleteRecords", 2,
         [("topics", ("arr", [("name", "str", 0),
                              ("partitions", ("arr", [("partition_index", "i32", 0), ("offset", "i64", 0)]), 0)]), 0),
          ("timeout_ms", "i32", 0)],
         [("throttle_time_ms", "i32", 0),
          ("topics", ("arr", [("name", "str", 0),
                              ("partitions", ("arr", [("partition_index", "i32", 0), ("low_watermark", "i64", 0),
                                                      ("error_code", "i16", 0)]), 0)]), 0)]),
    23: ("OffsetForLeaderEpoch", 4,
         [("replica_id", "i32", 3),
          ("topics", ("arr", [("topic", "str", 0),
                              ("partitions", ("arr", [("partition", "i32", 0), ("current_leader_epoch", "i32", 2),
                                                      ("leader_epoch", "i32", 0)]), 0)]), 0)],
         [("throttle_time_ms", "i32", 2),
          ("topics", ("arr", [("topic", "str", 0),
                              ("partitions", ("arr", [("error_code", "i16", 0), ("partition", "i32", 0),
                                                      ("leader_epoch", "i32", 1), ("end_offset", "i64", 0)]), 0)]), 0)]),
    32: ("DescribeConfigs", 4,
         [("resources", ("arr", [("resource_type", "i8", 0), ("resource_name", "str", 0),
                                 ("configuration_keys", ("narr", "str"), 0)]), 0),
          ("include_synonyms", "bool", 1), ("include_documentation", "bool", 3)],
         [("throttle_time_ms", "i32", 0),
          ("results", ("arr", [("error_code", "i16", 0), ("error_message", "nstr", 0), ("resource_type", "i8", 0),
                               ("resource_name", "str", 0),
                               ("configs", ("arr", [("name", "str", 0), ("value", "nstr", 0), ("read_only", "bool", 0),
                                                    ("config_source", "i8", 1), ("is_sensitive", "bool", 0),
                                                    ("synonyms", ("arr", [("name", "str", 1), ("value", "nstr", 1),
                                                                          ("source", "i8", 1)]), 1),
                                                    ("config_type", "i8", 3), ("documentation", "nstr", 3)]), 0)]), 0)]),
    33: ("AlterConfigs", 2,
         [("resources", ("arr", [("resource_type", "i8", 0), ("resource_name", "str", 0),
                                 ("configs", ("arr", [("name", "str", 0), ("value", "nstr", 0)]), 0)]), 0),
          ("validate_only", "bool", 0)],
         [("throttle_time_ms", "i32", 0),
          ("responses", ("arr", [("error_code", "i16", 0), ("error_message", "nstr", 0), ("resource_type", "i8", 0),
                                 ("resource_name", "str", 0)]), 0)]),
    35: ("DescribeLogDirs", 2,
         [("topics", ("narr", [("topic", "str", 0), ("partitions", ("arr", "i32"), 0)]), 0)],
         [("throttle_time_ms", "i32", 0), ("error_code", "i16", 3),
          ("results", ("arr", [("error_code", "i16", 0), ("log_dir", "str", 0),
                               ("topics", ("arr", [("name", "str", 0),
                                                   ("partitions", ("arr", [("partition_index", "i32", 0),
                                                                           ("partition_size", "i64", 0),
                                                                           ("offset_lag", "i64", 0),
                                                                           ("is_future_key", "bool", 0)]), 0)]), 0),
                               ("total_bytes", "i64", 4), ("usable_bytes", "i64", 4)]), 0)]),
    37: ("CreatePartitions", 2,
         [("topics", ("arr", [("name", "str", 0), ("count", "i32", 0),
                              ("assignments", ("narr", [("broker_ids", ("arr", "i32"), 0)]), 0)]), 0),
          ("timeout_ms", "i32", 0), ("validate_only", "bool", 0)],
         [("throttle_time_ms", "i32", 0),
          ("results", ("arr", [("name", "str", 0), ("error_code", "i16", 0), ("error_message", "nstr", 0)]), 0)]),
    44: ("IncrementalAlterConfigs", 1,
         [("resources", ("arr", [("resource_type", "i8", 0), ("resource_name", "str", 0),
                                 ("configs", ("arr", [("name", "str", 0), ("config_operation", "i8", 0),
                                                      ("value", "nstr", 0)]), 0)]), 0),
          ("validate_only", "bool", 0)],
         [("throttle_time_ms", "i32", 0),
          ("responses", ("arr", [("error_code", "i16", 0), ("error_message", "nstr", 0), ("resource_type", "i8", 0),
                                 ("resource_name", "str", 0)]), 0)]),
    # Metadata at v8 only (the last non-flexible version, the one kafka-python sends).
    3: ("Metadata", 9,
        [("topics", ("narr", [("name", "str", 0)]), 0), ("allow_auto_topic_creation", "bool", 4),
         ("include_cluster_authorized_operations", "bool", 8), ("include_topic_authorized_operations", "bool", 8)],
        [("throttle_time_ms", "i32", 3),
         ("brokers", ("arr", [("node_id", "i32", 0), ("host", "str", 0), ("port", "i32", 0), ("rack", "nstr", 1)]), 0),
         ("cluster_id", "nstr", 2), ("controller_id", "i32", 1),
         ("topics", ("arr", [("error_code", "i16", 0), ("name", "str", 0), ("is_internal", "bool", 1),
                             ("partitions", ("arr", [("error_code", "i16", 0), ("partition_index", "i32", 0),
                                                     ("leader_id", "i32", 0), ("leader_epoch", "i32", 7),
                                                     ("replica_nodes", ("arr", "i32"), 0),
                                                     ("isr_nodes", ("arr", "i32"), 0),
                                                     ("offline_replicas", ("arr", "i32"), 5)]), 0),
                             ("topic_authorized_operations", "i32", 8)]), 0),
         ("cluster_authorized_operations", "i32", 8)]),
    60: ("DescribeCluster", 0,
         [("include_cluster_authorized_operations", "bool", 0), ("endpoint_type", "i8", 1),
          ("include_fenced_brokers", "bool", 2)],
         [("throttle_time_ms", "i32", 0), ("error_code", "i16", 0), ("error_message", "nstr", 0),
          ("endpoint_type", "i8", 1), ("cluster_id", "str", 0), ("controller_id", "i32", 0),
          ("brokers", ("arr", [("broker_id", "i32", 0), ("host", "str", 0), ("port", "i32", 0), ("rack", "nstr", 0),
                               ("is_fenced", "bool", 2)]), 0),
          ("cluster_authorized_operations", "i32", 0)]),
}


class Raw:
    """One connection sending hand-encoded requests."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.corr = 0

    def call(self, key, v, body):
        name, flex_from, req_schema, resp_schema = APIS[key]
        flex = v >= flex_from
        self.corr += 1
        header = struct.pack(">hhi", key, v, self.corr) + enc_str("admin-test", False, True)
        if flex:
            header += uvarint(0)
        payload = header + encode(req_schema, body, v, flex)
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self.recv(4))[0]
        r = Reader(self.recv(size))
        eq(struct.unpack(">i", r.take(4))[0], self.corr, f"{name} v{v} correlation id")
        if flex and key != 18:
            r.skip_tags()
        resp = decode(resp_schema, r, v, flex)
        eq(r.i, len(r.d), f"{name} v{v} response fully read")
        return resp

    def recv(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            check(chunk, "connection closed by the broker")
            out += chunk
        return out


def api_versions(raw):
    """ApiVersions v0 by hand: {key: (min, max)}."""
    raw.corr += 1
    payload = struct.pack(">hhi", 18, 0, raw.corr) + enc_str("admin-test", False, True)
    raw.sock.sendall(struct.pack(">i", len(payload)) + payload)
    r = Reader(raw.recv(struct.unpack(">i", raw.recv(4))[0]))
    r.take(4)
    eq(struct.unpack(">h", r.take(2))[0], 0, "ApiVersions error")
    out = {}
    for _ in range(struct.unpack(">i", r.take(4))[0]):
        k, lo, hi = struct.unpack(">hhh", r.take(6))
        out[k] = (lo, hi)
    return out


# ---------------------------------------------------------------- tests

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
NONE, OFFSET_OUT_OF_RANGE, UNKNOWN_TOPIC_OR_PARTITION = 0, 1, 3
INVALID_PARTITIONS, INVALID_REPLICA_ASSIGNMENT, INVALID_CONFIG, INVALID_REQUEST = 37, 39, 40, 42
POLICY_VIOLATION, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH = 44, 74, 75
MISMATCHED_ENDPOINT_TYPE, UNSUPPORTED_ENDPOINT_TYPE = 114, 115


def wait_all(futures, timeout=20):
    """{key: exception or None} for a dict of futures."""
    out = {}
    for k, f in futures.items():
        try:
            f.result(timeout=timeout)
            out[k] = None
        except KafkaException as e:
            out[k] = e.args[0]
        except Exception as e:  # noqa: BLE001 (a timeout is a failure too)
            out[k] = e
    return out


def src(entry):
    """A config entry's source as its id (confluent-kafka gives an int or a ConfigSource)."""
    return getattr(entry.source, "value", entry.source)


def describe_topic(admin, topic):
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    return admin.describe_configs([res])[res].result(timeout=20)


def partition_count(admin, topic):
    md = admin.list_topics(topic=topic, timeout=20)
    return len(md.topics[topic].partitions)


def test_configs_with_librdkafka(b, admin):
    t = "admin-configs"
    eq(wait_all(admin.create_topics([NewTopic(t, 2, 1, config={"retention.ms": "3600000"})])), {t: None}, "create")
    cfg = describe_topic(admin, t)
    eq(cfg["retention.ms"].value, "3600000", "override value")
    eq(src(cfg["retention.ms"]), ConfigSource.DYNAMIC_TOPIC_CONFIG.value, "override source")
    eq(cfg["retention.ms"].is_read_only, False, "topic configs are alterable")
    eq(cfg["cleanup.policy"].value, "delete", "default value")
    eq(src(cfg["cleanup.policy"]), ConfigSource.DEFAULT_CONFIG.value, "default source")

    # Legacy AlterConfigs replaces the whole override set.
    res = ConfigResource(ConfigResource.Type.TOPIC, t, set_config={"segment.ms": "7200000"})
    eq(wait_all(admin.alter_configs([res])), {res: None}, "alter_configs")
    cfg = describe_topic(admin, t)
    eq(cfg["segment.ms"].value, "7200000", "altered value")
    eq(src(cfg["segment.ms"]), ConfigSource.DYNAMIC_TOPIC_CONFIG.value, "altered source")
    # retention.ms fell back to the broker's log.retention.hours=100.
    eq(cfg["retention.ms"].value, str(100 * 3600 * 1000), "replaced override falls back to the broker")
    eq(src(cfg["retention.ms"]), ConfigSource.STATIC_BROKER_CONFIG.value, "static broker source")

    bad = ConfigResource(ConfigResource.Type.TOPIC, t, set_config={"retention.ms": "soon"})
    err = wait_all(admin.alter_configs([bad]))[bad]
    eq(err.code(), INVALID_CONFIG, "invalid value refused")
    check("retention.ms" in err.str(), f"message names the key: {err.str()}")
    unknown = ConfigResource(ConfigResource.Type.TOPIC, "no-such-topic", set_config={"retention.ms": "1"})
    err = wait_all(admin.alter_configs([unknown]))[unknown]
    eq(err.code(), UNKNOWN_TOPIC_OR_PARTITION, "alter of an unknown topic")
    eq(describe_topic(admin, t)["segment.ms"].value, "7200000", "failed alters change nothing")

    # The broker's own configs: static values and defaults; only the
    # dynamic ones (the topic defaults Kafka lets change) are writable.
    res = ConfigResource(ConfigResource.Type.BROKER, "1")
    cfg = admin.describe_configs([res])[res].result(timeout=20)
    eq(cfg["node.id"].value, "1", "node.id")
    eq(src(cfg["node.id"]), ConfigSource.STATIC_BROKER_CONFIG.value, "node.id source")
    eq(cfg["log.retention.hours"].value, "100", "log.retention.hours")
    eq(src(cfg["num.network.threads"]), ConfigSource.DEFAULT_CONFIG.value, "default broker config source")
    check(cfg["node.id"].is_read_only and cfg["log.retention.hours"].is_read_only, "static broker configs are read-only")
    check(not cfg["log.retention.ms"].is_read_only, "log.retention.ms is dynamic")

    # A static broker config cannot be changed at runtime.
    res = ConfigResource(ConfigResource.Type.BROKER, "1", set_config={"log.retention.hours": "1"})
    err = wait_all(admin.alter_configs([res]))[res]
    eq(err.code(), INVALID_REQUEST, "static broker config refused")
    check("Cannot update these configs dynamically: Set(log.retention.hours)" in err.str(), err.str())


def test_dynamic_broker_configs(b, admin):
    """BROKER "" and BROKER "1" layers over server.properties, applied to
    topics without overrides at once, kept across a restart. BROKER "" goes
    by hand-built AlterConfigs: confluent-kafka 1.7.0 refuses an empty name."""
    t = "admin-dynamic"
    eq(wait_all(admin.create_topics([NewTopic(t, 1, 1)])), {t: None}, "create")

    def retention():
        e = describe_topic(admin, t)["retention.ms"]
        return e.value, src(e)

    def alter_broker(name, configs):
        r = Raw(b.port).call(33, 2, {"resources": [{"resource_type": BROKER, "resource_name": name,
                                                    "configs": [{"name": k, "value": v} for k, v in configs.items()]}],
                                     "validate_only": False})
        return r["responses"][0]["error_code"], r["responses"][0]["error_message"]

    eq(retention(), (str(100 * 3600 * 1000), ConfigSource.STATIC_BROKER_CONFIG.value), "before: server.properties")
    eq(alter_broker("", {"log.retention.ms": "7200000"}), (NONE, None), "cluster-wide default set")
    eq(retention(), ("7200000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value), "cluster default applies")
    mine = ConfigResource(ConfigResource.Type.BROKER, "1", set_config={"log.retention.ms": "3600000"})
    eq(wait_all(admin.alter_configs([mine])), {mine: None}, "per-broker value set (librdkafka)")
    eq(retention(), ("3600000", ConfigSource.DYNAMIC_BROKER_CONFIG.value), "per-broker value wins")

    r = Raw(b.port).call(32, 4, {"resources": [{"resource_type": BROKER, "resource_name": "", "configuration_keys": None}],
                                 "include_synonyms": True, "include_documentation": False})
    cfg = r["results"][0]["configs"]
    eq([(c["name"], c["value"], c["config_source"]) for c in cfg],
       [("log.retention.ms", "7200000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)],
       "BROKER \"\" lists the cluster defaults that are set")

    code, msg = alter_broker("1", {"log.retention.ms": "soon"})
    eq(code, INVALID_CONFIG, "invalid dynamic value refused")
    eq(msg, "Invalid value soon for configuration log.retention.ms: Not a number of type LONG", "its message")

    b.restart()
    eq(retention(), ("3600000", ConfigSource.DYNAMIC_BROKER_CONFIG.value), "kept across a restart")
    # AlterConfigs replaces a layer's whole set: an empty set clears it.
    for name in ("1", ""):
        eq(alter_broker(name, {}), (NONE, None), "cleared " + repr(name))
    eq(retention(), (str(100 * 3600 * 1000), ConfigSource.STATIC_BROKER_CONFIG.value), "after: server.properties again")


def test_create_partitions(b, admin):
    t = "admin-grow"
    eq(wait_all(admin.create_topics([NewTopic(t, 2, 1)])), {t: None}, "create")
    eq(wait_all(admin.create_partitions([NewPartitions(t, 4)])), {t: None}, "grow to 4")
    eq(partition_count(admin, t), 4, "metadata after growing")
    eq(wait_all(admin.create_partitions([NewPartitions(t, 6)], validate_only=True)), {t: None}, "validate only")
    eq(partition_count(admin, t), 4, "validate only creates nothing")
    err = wait_all(admin.create_partitions([NewPartitions(t, 3)]))[t]
    eq(err.code(), INVALID_PARTITIONS, "shrink")
    eq(err.str(), "The topic admin-grow currently has 4 partition(s); 3 would not be an increase.", "shrink message")
    err = wait_all(admin.create_partitions([NewPartitions(t, 4)]))[t]
    eq(err.code(), INVALID_PARTITIONS, "same count")
    eq(err.str(), "Topic already has 4 partition(s).", "same count message")
    err = wait_all(admin.create_partitions([NewPartitions("admin-none", 4)]))["admin-none"]
    eq(err.code(), UNKNOWN_TOPIC_OR_PARTITION, "unknown topic")
    eq(wait_all(admin.create_partitions([NewPartitions(t, 5, replica_assignment=[[1]])])), {t: None}, "manual")
    err = wait_all(admin.create_partitions([NewPartitions(t, 6, replica_assignment=[[2]])]))[t]
    eq(err.code(), INVALID_REPLICA_ASSIGNMENT, "assignment to an unknown broker")
    eq(partition_count(admin, t), 5, "metadata after the manual assignment")

    # Duplicates and versions, by hand.
    raw = Raw(b.port)
    for v in range(0, 4):
        r = raw.call(37, v, {"topics": [{"name": t, "count": 9, "assignments": None},
                                        {"name": t, "count": 9, "assignments": None}],
                             "timeout_ms": 5000, "validate_only": False})
        eq([(x["name"], x["error_code"], x["error_message"]) for x in r["results"]],
           [(t, INVALID_REQUEST, "Duplicate topic name.")], f"duplicates v{v}")
    r = raw.call(37, 3, {"topics": [{"name": t, "count": 7, "assignments": [{"broker_ids": [1]}]}],
                         "timeout_ms": 5000, "validate_only": False})
    eq(r["results"][0]["error_message"], "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.",
       "assignment count")
    r = raw.call(37, 3, {"topics": [{"name": t, "count": 6, "assignments": [{"broker_ids": [1, 1]}]}],
                         "timeout_ms": 5000, "validate_only": False})
    eq(r["results"][0]["error_message"], "The manual partition assignment includes the broker 1 more than once.",
       "repeated broker")
    eq(partition_count(admin, t), 5, "nothing created by refused requests")


def configs_of(result):
    return {c["name"]: c for c in result["configs"]}


def test_describe_configs_raw(b):
    raw = Raw(b.port)
    t = "admin-configs"
    for v in range(1, 5):
        r = raw.call(32, v, {"resources": [{"resource_type": TOPIC, "resource_name": t,
                                            "configuration_keys": ["segment.ms", "retention.ms", "no.such.key"]},
                                           {"resource_type": TOPIC, "resource_name": "admin-missing",
                                            "configuration_keys": None},
                                           {"resource_type": BROKER, "resource_name": "2", "configuration_keys": None},
                                           {"resource_type": BROKER, "resource_name": "", "configuration_keys": None},
                                           {"resource_type": BROKER_LOGGER, "resource_name": "", "configuration_keys": None}],
                             "include_synonyms": True, "include_documentation": False})
        topic, missing, other, default, logger = r["results"]
        eq(topic["error_code"], NONE, f"v{v} topic")
        eq(topic["error_message"], None, f"v{v} no message on success")
        eq(sorted(configs_of(topic)), ["retention.ms", "segment.ms"], f"v{v} only the requested keys")
        seg = configs_of(topic)["segment.ms"]
        eq((seg["value"], seg["config_source"], seg["read_only"], seg["is_sensitive"]), ("7200000", 1, False, False),
           f"v{v} segment.ms")
        eq(seg["synonyms"][0], {"name": "segment.ms", "value": "7200000", "source": 1}, f"v{v} first synonym is the override")
        if v >= 3:
            eq(seg["config_type"], 5, f"v{v} LONG")
            eq(seg["documentation"], None, f"v{v} no documentation unless asked")
        eq((missing["error_code"], missing["configs"]), (UNKNOWN_TOPIC_OR_PARTITION, []), f"v{v} unknown topic")
        eq(other["error_code"], INVALID_REQUEST, f"v{v} another broker")
        eq(other["error_message"], "Unexpected broker id, expected 1 or empty string, but received 2", f"v{v} message")
        eq((default["error_code"], default["configs"]), (NONE, []), f"v{v} no dynamic defaults")
        eq((logger["error_code"], logger["error_message"]), (INVALID_REQUEST, "Broker id must not be empty"), f"v{v} logger")

    r = raw.call(32, 4, {"resources": [{"resource_type": BROKER, "resource_name": "1", "configuration_keys": []}],
                         "include_synonyms": False, "include_documentation": False})
    cfgs = configs_of(r["results"][0])
    check(len(cfgs) > 50, f"every broker config is listed ({len(cfgs)})")
    eq(cfgs["log.retention.hours"]["synonyms"], [], "synonyms only when asked")
    eq(cfgs["log.retention.ms"]["value"], None, "null default")
    r = raw.call(32, 4, {"resources": [{"resource_type": BROKER, "resource_name": "1",
                                        "configuration_keys": ["log.retention.hours"]}],
                         "include_synonyms": True, "include_documentation": False})
    eq(r["results"][0]["configs"][0]["synonyms"],
       [{"name": "log.retention.hours", "value": "100", "source": 4},
        {"name": "log.retention.hours", "value": "168", "source": 5}], "broker synonyms")
    r = raw.call(32, 4, {"resources": [{"resource_type": 7, "resource_name": "x", "configuration_keys": None}],
                         "include_synonyms": False, "include_documentation": False})
    eq(r["results"][0]["error_code"], INVALID_REQUEST, "unknown resource type")


def test_incremental_alter_configs(b, admin):
    raw = Raw(b.port)
    t = "admin-incr"
    eq(wait_all(admin.create_topics([NewTopic(t, 1, 1)])), {t: None}, "create")

    def alter(v, ops, validate_only=False, rtype=TOPIC, name=t):
        r = raw.call(44, v, {"resources": [{"resource_type": rtype, "resource_name": name,
                                            "configs": [{"name": n, "config_operation": op, "value": val}
                                                        for n, op, val in ops]}],
                             "validate_only": validate_only})
        x = r["responses"][0]
        eq((x["resource_type"], x["resource_name"]), (rtype, name), "response names the resource")
        return x["error_code"], x["error_message"]

    for v in (0, 1):
        eq(alter(v, [("retention.ms", 0, "1000")], validate_only=True), (NONE, None), f"v{v} validate only")
        eq(src(describe_topic(admin, t)["retention.ms"]), ConfigSource.STATIC_BROKER_CONFIG.value, "unchanged")
        eq(alter(v, [("retention.ms", 0, "1000"), ("cleanup.policy", 2, "compact")]), (NONE, None), f"v{v} set+append")
        cfg = describe_topic(admin, t)
        eq((cfg["retention.ms"].value, src(cfg["retention.ms"])), ("1000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value),
           f"v{v} set")
        eq(cfg["cleanup.policy"].value, "delete,compact", f"v{v} append to the default")
        eq(alter(v, [("cleanup.policy", 3, "delete")]), (NONE, None), f"v{v} subtract")
        eq(describe_topic(admin, t)["cleanup.policy"].value, "compact", f"v{v} subtracted")
        eq(alter(v, [("retention.ms", 1, None), ("cleanup.policy", 1, None)]), (NONE, None), f"v{v} delete")
        cfg = describe_topic(admin, t)
        eq(src(cfg["retention.ms"]), ConfigSource.STATIC_BROKER_CONFIG.value, f"v{v} deleted override")
        eq(cfg["cleanup.policy"].value, "delete", f"v{v} back to the default")

        eq(alter(v, [("retention.ms", 2, "5")]),
           (INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST."), f"v{v} append non-list")
        code, msg = alter(v, [("retention.ms", 0, "soon")])
        eq(code, INVALID_CONFIG, f"v{v} bad value")
        check(msg.startswith("Invalid value soon for configuration retention.ms"), msg)
        eq(alter(v, [("no.such.config", 0, "1")]), (INVALID_CONFIG, "Unknown topic config name: no.such.config"),
           f"v{v} unknown key")
        eq(alter(v, [("retention.ms", 0, "1")], name="admin-missing"),
           (UNKNOWN_TOPIC_OR_PARTITION, "The topic 'admin-missing' does not exist."), f"v{v} unknown topic")
        eq(alter(v, [("retention.ms", 0, "1"), ("retention.ms", 0, "2")]),
           (INVALID_REQUEST, "Error due to duplicate config keys"), f"v{v} duplicate keys")
        eq(alter(v, [("retention.ms", 0, None)]), (INVALID_REQUEST, "Null value not supported for : retention.ms"),
           f"v{v} null value")
        eq(alter(v, [("log.retention.hours", 0, "1"), ("num.io.threads", 0, "2")], rtype=BROKER, name="1"),
           (INVALID_REQUEST, "Cannot update these configs dynamically: Set(log.retention.hours, num.io.threads)"),
           f"v{v} broker")
        eq(alter(v, [("log.retention.hours", 0, "1")], rtype=BROKER, name=""),
           (INVALID_REQUEST, "Cannot update these configs dynamically: Set(log.retention.hours)"), f"v{v} cluster default")
        eq(alter(v, [("log.retention.hours", 0, "1")], rtype=BROKER, name="7"),
           (INVALID_REQUEST, "Unexpected broker id, expected 1, but received 7"), f"v{v} another broker")
        eq(alter(v, [("log.retention.hours", 1, None)], rtype=BROKER, name="1"), (NONE, None), f"v{v} delete nothing")
        # log.cleanup.policy is dynamic and a list: APPEND starts from its default.
        eq(alter(v, [("log.cleanup.policy", 2, "compact")], rtype=BROKER, name="1"), (NONE, None), f"v{v} dynamic append")
        policy = describe_topic(admin, t)["cleanup.policy"]
        eq((policy.value, src(policy)), ("delete,compact", ConfigSource.DYNAMIC_BROKER_CONFIG.value),
           f"v{v} the topic sees the dynamic default")
        eq(alter(v, [("log.cleanup.policy", 1, None)], rtype=BROKER, name="1"), (NONE, None), f"v{v} dynamic delete")
        eq(alter(v, [("root", 0, "INFO")], rtype=BROKER_LOGGER, name="1"), (NONE, None), f"v{v} logger level")

    r = raw.call(44, 1, {"resources": [{"resource_type": TOPIC, "resource_name": t, "configs": []},
                                       {"resource_type": TOPIC, "resource_name": t, "configs": []}],
                         "validate_only": False})
    eq([(x["error_code"], x["error_message"]) for x in r["responses"]],
       [(INVALID_REQUEST, "Each resource must appear at most once.")] * 2, "duplicate resources")

    # The override is in force and survives in the topic table: a legacy
    # AlterConfigs at every version, read back.
    for v in range(0, 3):
        r = raw.call(33, v, {"resources": [{"resource_type": TOPIC, "resource_name": t,
                                            "configs": [{"name": "max.message.bytes", "value": str(2000 + v)}]}],
                             "validate_only": False})
        eq((r["responses"][0]["error_code"], r["responses"][0]["error_message"]), (NONE, None), f"AlterConfigs v{v}")
        eq(describe_topic(admin, t)["max.message.bytes"].value, str(2000 + v), f"AlterConfigs v{v} applied")
    r = raw.call(33, 2, {"resources": [{"resource_type": BROKER_LOGGER, "resource_name": "1", "configs": []}],
                         "validate_only": False})
    eq((r["responses"][0]["error_code"], r["responses"][0]["error_message"]),
       (INVALID_REQUEST, "Unknown resource type 8"), "AlterConfigs has no logger resource")


def produce(b, topic, partition, n):
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all"})
    for i in range(n):
        p.produce(topic, value=f"v{i}".encode(), partition=partition)
    check(p.flush(30) == 0, "produce flushed")


def test_delete_records(b, admin):
    t = "admin-delete"
    eq(wait_all(admin.create_topics([NewTopic(t, 2, 1)])), {t: None}, "create")
    produce(b, t, 0, 10)
    raw = Raw(b.port)

    def delete(v, parts, topic=t):
        r = raw.call(21, v, {"topics": [{"name": topic, "partitions": [{"partition_index": p, "offset": o}
                                                                       for p, o in parts]}], "timeout_ms": 5000})
        eq(r["topics"][0]["name"], topic, "topic named")
        return [(x["partition_index"], x["low_watermark"], x["error_code"]) for x in r["topics"][0]["partitions"]]

    eq(delete(0, [(0, 4), (7, 1)]), [(0, 4, NONE), (7, -1, UNKNOWN_TOPIC_OR_PARTITION)], "v0 delete")
    eq(delete(1, [(0, 2)]), [(0, 4, NONE)], "v1 never moves back")
    eq(delete(2, [(0, 11), (1, -2)]), [(0, -1, OFFSET_OUT_OF_RANGE), (1, -1, OFFSET_OUT_OF_RANGE)], "v2 out of range")
    eq(delete(2, [(0, 0)], topic="admin-missing"), [(0, -1, UNKNOWN_TOPIC_OR_PARTITION)], "unknown topic")

    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "admin-test", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    try:
        eq(c.get_watermark_offsets(TopicPartition(t, 0), timeout=20), (4, 10), "watermarks after delete")
        c.assign([TopicPartition(t, 0, 0)])
        first = None
        deadline = time.time() + 30
        while first is None and time.time() < deadline:
            m = c.poll(1.0)
            if m is not None and not m.error():
                first = m
        check(first is not None, "consumed after the reset")
        eq((first.offset(), first.value()), (4, b"v4"), "offset 0 is gone: reset to the log start")
    finally:
        c.close()

    eq(delete(2, [(0, -1)]), [(0, 10, NONE)], "-1 deletes up to the high watermark")

    # A compacted topic refuses record deletion.
    raw.call(44, 1, {"resources": [{"resource_type": TOPIC, "resource_name": t,
                                    "configs": [{"name": "cleanup.policy", "config_operation": 0, "value": "compact"}]}],
                     "validate_only": False})
    eq(delete(2, [(1, 0)]), [(1, -1, POLICY_VIOLATION)], "compacted topic")


def test_describe_cluster(b):
    raw = Raw(b.port)
    for v in range(0, 3):
        r = raw.call(60, v, {"include_cluster_authorized_operations": False, "endpoint_type": 1,
                             "include_fenced_brokers": True})
        eq((r["error_code"], r["error_message"]), (NONE, None), f"v{v} error")
        check(r["cluster_id"], f"v{v} cluster id")
        eq(r["controller_id"], 1, f"v{v} controller")
        brokers = [(x["broker_id"], x["host"], x["port"], x["rack"]) for x in r["brokers"]]
        eq(brokers, [(1, "127.0.0.1", b.port, None)], f"v{v} brokers")
        eq(r["cluster_authorized_operations"], -2147483648, f"v{v} operations not requested")
        if v >= 1:
            eq(r["endpoint_type"], 1, f"v{v} endpoint type")
        if v >= 2:
            eq(r["brokers"][0]["is_fenced"], False, "not fenced")
    r = raw.call(60, 0, {"include_cluster_authorized_operations": True, "endpoint_type": 1, "include_fenced_brokers": False})
    eq(r["cluster_authorized_operations"], 8096, "every cluster operation")
    r = raw.call(60, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 2, "include_fenced_brokers": False})
    eq((r["error_code"], r["error_message"]),
       (MISMATCHED_ENDPOINT_TYPE, "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"),
       "controller endpoint")
    r = raw.call(60, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 9, "include_fenced_brokers": False})
    eq((r["error_code"], r["error_message"]), (UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 9"), "bad endpoint type")


def test_metadata_authorized_operations(b):
    # Asked for, Kafka without an authorizer reports every operation the
    # resource type supports; not asked, INT32_MIN. kafka-python always asks
    # and cannot read INT32_MIN (bit 31 is no operation it knows).
    raw = Raw(b.port)
    t = "admin-ops"
    for asked in (False, True):
        r = raw.call(3, 8, {"topics": [{"name": t}], "allow_auto_topic_creation": True,
                            "include_cluster_authorized_operations": asked,
                            "include_topic_authorized_operations": asked})
        eq(r["cluster_authorized_operations"], 8096 if asked else -2147483648, f"asked={asked}: cluster operations")
        eq([(x["name"], x["error_code"], x["topic_authorized_operations"]) for x in r["topics"]],
           [(t, NONE, 3576 if asked else -2147483648)], f"asked={asked}: topic operations")


def test_offset_for_leader_epoch(b):
    t = "admin-epoch"
    raw = Raw(b.port)
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    eq(wait_all(admin.create_topics([NewTopic(t, 1, 1)])), {t: None}, "create")
    produce(b, t, 0, 5)
    for v in range(2, 5):
        r = raw.call(23, v, {"replica_id": -1, "topics": [{"topic": t, "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0},
            {"partition": 0, "current_leader_epoch": 0, "leader_epoch": 0},
            {"partition": 0, "current_leader_epoch": 1, "leader_epoch": 0},
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 3},
            {"partition": 5, "current_leader_epoch": -1, "leader_epoch": 0}]}]})
        got = [(x["error_code"], x["partition"], x["leader_epoch"], x["end_offset"]) for x in r["topics"][0]["partitions"]]
        eq(got, [(NONE, 0, 0, 5), (NONE, 0, 0, 5), (UNKNOWN_LEADER_EPOCH, 0, -1, -1), (NONE, 0, -1, -1),
                 (UNKNOWN_TOPIC_OR_PARTITION, 5, -1, -1)], f"v{v}")
    # Fencing needs an epoch below the current one; the current one is 0.
    r = raw.call(23, 4, {"replica_id": 1, "topics": [{"topic": "admin-missing", "partitions": [
        {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]})
    eq(r["topics"][0]["partitions"][0]["error_code"], UNKNOWN_TOPIC_OR_PARTITION, "unknown topic")


def test_describe_log_dirs(b):
    raw = Raw(b.port)
    data = os.path.realpath(b.log_dir)
    for v in range(1, 5):
        r = raw.call(35, v, {"topics": [{"topic": "admin-epoch", "partitions": [0, 9]}]})
        eq(len(r["results"]), 1, f"v{v} one log dir")
        d = r["results"][0]
        eq((d["error_code"], os.path.realpath(d["log_dir"])), (NONE, data), f"v{v} log dir")
        eq([(x["name"], [(p["partition_index"], p["offset_lag"], p["is_future_key"]) for p in x["partitions"]])
            for x in d["topics"]], [("admin-epoch", [(0, 0, False)])], f"v{v} the asked partition only")
        check(d["topics"][0]["partitions"][0]["partition_size"] > 0, f"v{v} size")
        if v >= 3:
            eq(r["error_code"], NONE, f"v{v} top-level error")
        if v >= 4:
            check(d["total_bytes"] > 0 and 0 <= d["usable_bytes"] <= d["total_bytes"], f"v{v} space {d}")
        r = raw.call(35, v, {"topics": None})
        names = {x["name"] for x in r["results"][0]["topics"]}
        check({"admin-epoch", "admin-grow", "admin-configs"} <= names, f"v{v} all topics: {names}")


def main():
    b = Runnel(overrides={"log.retention.hours": "100", "num.partitions": "1"}).start()
    try:
        admin = AdminClient({"bootstrap.servers": b.bootstrap})

        def advertised():
            versions = api_versions(Raw(b.port))
            for key in APIS:
                check(key in versions, f"API {APIS[key][0]} advertised")

        def graceful_stop():
            eq(b.stop(), 0, "exit status after SIGTERM (a sanitizer report makes it non-zero)")

        rc = run_tests([("advertised", advertised),
                        ("configs (librdkafka)", lambda: test_configs_with_librdkafka(b, admin)),
                        ("dynamic broker configs", lambda: test_dynamic_broker_configs(b, admin)),
                        ("create partitions", lambda: test_create_partitions(b, admin)),
                        ("describe configs", lambda: test_describe_configs_raw(b)),
                        ("incremental alter configs", lambda: test_incremental_alter_configs(b, admin)),
                        ("delete records", lambda: test_delete_records(b, admin)),
                        ("describe cluster", lambda: test_describe_cluster(b)),
                        ("metadata authorized operations", lambda: test_metadata_authorized_operations(b)),
                        ("offset for leader epoch", lambda: test_offset_for_leader_epoch(b)),
                        ("describe log dirs", lambda: test_describe_log_dirs(b)),
                        ("graceful stop", graceful_stop)], broker=b)
    finally:
        b.close()
    print(f"admin_test: {CHECKS} checks, {'FAILED' if rc else 'all passed'}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
