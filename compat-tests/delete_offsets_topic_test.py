"""Deleting __consumer_offsets (issue 12, defect 9), with confluent-kafka.

Kafka 4.x accepts DeleteTopics on __consumer_offsets (only its CLI
refuses): the group coordinator resigns the deleted partitions, so every
group and its committed offsets are gone at once, and the topic is created
again on the next FindCoordinator. Runnel used to accept the deletion but
keep serving the offsets from memory until a restart silently wiped them.
Here the offsets are gone at once, stay gone after a restart, and a new
commit works on the recreated topic.
"""

import sys

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from runnel_harness import Runnel, run_tests

TOPIC = "orders"
GROUP = "billing"
OFFSETS = "__consumer_offsets"
TIMEOUT = 60


def consumer(broker):
    return Consumer({"bootstrap.servers": broker.bootstrap, "group.id": GROUP,
                     "enable.auto.commit": False, "socket.timeout.ms": 30000})


def commit(broker, offset):
    c = consumer(broker)
    try:
        c.commit(offsets=[TopicPartition(TOPIC, 0, offset)], asynchronous=False)
    finally:
        c.close()


def committed(broker):
    c = consumer(broker)
    try:
        [tp] = c.committed([TopicPartition(TOPIC, 0)], timeout=TIMEOUT)
        return tp.offset
    finally:
        c.close()


def offsets_gone_at_once(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(TIMEOUT)
    commit(broker, 42)
    assert committed(broker) == 42
    assert OFFSETS in admin.list_topics(timeout=TIMEOUT).topics

    admin.delete_topics([OFFSETS], operation_timeout=30)[OFFSETS].result(TIMEOUT)  # accepted, as Kafka does
    got = committed(broker)
    assert got < 0, "offset %d still served after __consumer_offsets was deleted" % got
    assert OFFSETS in admin.list_topics(timeout=TIMEOUT).topics, "FindCoordinator did not create the topic again"

    broker.restart()
    got = committed(broker)
    assert got < 0, "offset %d back after a restart" % got

    commit(broker, 7)
    broker.restart()
    assert committed(broker) == 7


def main():
    with Runnel() as broker:
        rc = run_tests([("DeleteTopics __consumer_offsets: offsets gone at once and after a restart",
                         lambda: offsets_gone_at_once(broker))], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
