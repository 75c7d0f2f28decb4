"""What the topic creation tests check: whether a topic exists anywhere (in
Metadata, in runnel-topics.json, as partition directories); and the
partition rows of Kafka's kafka-topics --describe."""

import json
import os
import re

import kafka_wire as w

SLOW = 600.0  # generous bound for one creation on a loaded machine

# TopicCommand's PartitionDescription, one line per partition.
_ROW = re.compile(r"^\s*Topic: (\S+)\tPartition: (\d+)\tLeader: (\S+)\tReplicas: (\S*)\tIsr: (\S*)(.*)$")


def partition_rows(text):
    """{(topic, partition): (leader, replicas, isr, rest of the row)} of --describe's output, as printed."""
    rows = {}
    for line in text.splitlines():
        m = _ROW.match(line)
        if m:
            key = (m.group(1), int(m.group(2)))
            assert key not in rows, "partition %s-%d described twice:\n%s" % (key[0], key[1], text)
            rows[key] = (m.group(3), m.group(4), m.group(5), m.group(6))
    return rows


def partition_dirs(broker, topic):
    """The topic's live partition directories ("-delete" ones are removed)."""
    prefix = topic + "-"
    return sorted(d for d in os.listdir(broker.log_dir)
                  if d.startswith(prefix) and d[len(prefix):].isdigit())


def topics_file(broker):
    path = os.path.join(broker.log_dir, "runnel-topics.json")
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {t["name"] for t in json.load(f)["topics"]}


def listed(broker, topic):
    with w.Connection(broker.port) as c:
        return topic in w.parse_metadata_v1_topics(c.call(w.metadata_v1(1), 1))


def create(broker, topics, corr=1, validate_only=False):
    with w.Connection(broker.port, timeout=SLOW) as c:
        return w.parse_create_topics_v4(c.call(w.create_topics_v4(corr, topics, validate_only=validate_only), corr))


def assert_absent(broker, topic):
    assert not listed(broker, topic), "%s is listed by Metadata" % topic
    assert topic not in topics_file(broker), "%s is in runnel-topics.json" % topic
    dirs = partition_dirs(broker, topic)
    assert not dirs, "partition directories left behind: %s" % dirs[:10]
