"""Produce pipelining on one connection (label "cluster"). Kafka serves a
connection's requests one at a time, to the end, so an acks=all Produce
waiting for its followers holds up everything behind it. Runnel lets a
Produce whose records are appended release the connection (broker/
connection.h): a later Produce on it is appended at once, while anything
else still waits for the earlier ones, and responses leave in request
order. On three brokers with 30 s sessions and replica.lag.time.max.ms
60 s (a stopped follower stays registered and in the ISR for the whole
test):

  - topic "all": one partition, replication factor 3; one of its followers
    (not the controller) is SIGSTOPped, so an acks=all Produce to its
    leader waits;
  - on one connection to that leader: Produce acks=all to "all" (waits),
    Produce acks=1 to a partition of "one" (replication factor 1) the same
    broker leads, ListOffsets latest of "all";
  - while the follower is stopped: "one"'s record is readable (its
    ListOffsets from another connection says 1), and no response has come
    back on the first connection (the acks=all one is first in line);
  - after SIGCONT: the three responses in order, both produces without
    error at offset 0, and the ListOffsets answer 1: it was served after
    the acks=all produce completed, as on Kafka.

  /usr/bin/python3 compat-tests/cluster_pipelined_produce_test.py build/debug/runnel
"""

import select
import sys
import time

import kafka_wire as kw
from cluster_harness import NONE, Cluster, create_topic, list_offset, run_tests, runnel_binary, wait_until

BOUND = 30.0  # seconds: CI machines are loaded
SESSION_MS = 30000


def batch(value):
    return kw.record_batch([(b"k", value, [])], int(time.time() * 1000))


def pipelined(c):
    create_topic(c.bootstrap(), "all", 1, 3)
    create_topic(c.bootstrap(), "one", 3, 1)
    c.wait_in_sync("all", BOUND)
    c.wait_in_sync("one", BOUND)
    leader = c.partitions(1, "all")[0]["leader"]
    one = [i for i, p in c.partitions(1, "one").items() if p["leader"] == leader]
    assert one, "broker %d leads no partition of \"one\"" % leader
    controller = c.controller(leader)
    follower = next(i for i in c.partitions(1, "all")[0]["replicas"] if i not in (leader, controller))

    c.sigstop(follower)
    try:
        conn = kw.Connection(c.port(leader), timeout=BOUND)
        conn.send(kw.produce_v8(1, -1, {"all": [(0, batch(b"waits for its followers"))]}))
        conn.send(kw.produce_v8(2, 1, {"one": [(one[0], batch(b"behind it on the connection"))]}))
        conn.send(kw.list_offsets_v1(3, "all", [0]))
        wait_until(lambda: list_offset(c, leader, "one", one[0]) == 1, BOUND,
                   "the acks=1 record to be appended while the acks=all produce before it waits")
        ready, _, _ = select.select([conn.sock], [], [], 0)
        assert not ready, "a response came back while the acks=all produce still waits"
    finally:
        c.sigcont(follower)
    all_result = kw.parse_produce_v8(conn.response(1))[("all", 0)]
    one_result = kw.parse_produce_v8(conn.response(2))[("one", one[0])]
    offsets = kw.parse_list_offsets_v1(conn.response(3))[("all", 0)]
    conn.close()
    assert all_result[:2] == (NONE, 0), "acks=all produce: %s" % (all_result,)
    assert one_result[:2] == (NONE, 0), "acks=1 produce: %s" % (one_result,)
    assert offsets == (NONE, 1), "ListOffsets after the acks=all produce: %s" % (offsets,)
    print("     leader %d, follower %d stopped: acks=1 appended behind a waiting acks=all; responses in order; "
          "ListOffsets served after it (1)" % (leader, follower), flush=True)


def main():
    with Cluster(3, runnel_binary(), session_timeout_ms=SESSION_MS, heartbeat_interval_ms=1000,
                 overrides={"controlled.shutdown.enable": "false", "replica.lag.time.max.ms": "60000"}) as c:
        return run_tests([("a Produce behind a waiting acks=all Produce on one connection", lambda: pipelined(c))], c)


if __name__ == "__main__":
    sys.exit(main())
