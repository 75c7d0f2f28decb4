"""FindCoordinator for transactional ids and groups, from hand-built
requests (issue 12, defect 12; issue 16).

A single node coordinates every transactional id: the first FindCoordinator
for one creates __transaction_state and answers with this node, at the top
level for v0-3 and per coordinator key for v4+. An unknown key type is
INVALID_REQUEST. Groups find this broker too.
"""

import sys

import kafka_wire as w
from runnel_harness import Runnel, run_tests

GROUP, TRANSACTION = 0, 1
INVALID_REQUEST = 42


def single_key(broker):
    with w.Connection(broker.port) as c:
        err, message, node = w.parse_find_coordinator_v1(c.call(w.find_coordinator_v1(1, "txn-a", TRANSACTION), 1))
        assert (err, node) == (0, 1), (err, message, node)
        err, message, node = w.parse_find_coordinator_v1(c.call(w.find_coordinator_v1(5, "share-a", 3), 5))
        assert (err, node) == (INVALID_REQUEST, -1), (err, message, node)
        err, message, node = w.parse_find_coordinator_v1(c.call(w.find_coordinator_v1(2, "group-a", GROUP), 2))
        assert (err, node) == (0, 1), (err, message, node)


def batched_keys(broker):
    with w.Connection(broker.port) as c:
        out = w.parse_find_coordinator_v4(c.call(w.find_coordinator_v4(3, ["txn-a", "txn-b"], TRANSACTION), 3))
        assert [(k, n, e) for k, n, e, _ in out] == [("txn-a", 1, 0), ("txn-b", 1, 0)], out
        out = w.parse_find_coordinator_v4(c.call(w.find_coordinator_v4(4, ["group-a"], GROUP), 4))
        assert [(k, n, e) for k, n, e, _ in out] == [("group-a", 1, 0)], out


def main():
    with Runnel() as broker:
        rc = run_tests([
            ("v1: a transactional id and a group are found, an unknown key type refused", lambda: single_key(broker)),
            ("v4: each transactional key and a group are found", lambda: batched_keys(broker)),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
