"""FindCoordinator for transactional ids, from hand-built requests (issue
12, defect 12).

Runnel has no transaction coordinator yet. COORDINATOR_NOT_AVAILABLE made
franz-go's transactional producer retry for ever; Runnel answers
TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53), as its InitProducerId and
Produce answer a transactional id, so the client fails at once: at the top
level for v0-3, per coordinator key for v4+. Groups still find this broker.
"""

import sys

import kafka_wire as w
from runnel_harness import Runnel, run_tests

GROUP, TRANSACTION = 0, 1
TXN_DENIED = 53
MESSAGE = "Transactional Id authorization failed."


def single_key(broker):
    with w.Connection(broker.port) as c:
        err, message, node = w.parse_find_coordinator_v1(c.call(w.find_coordinator_v1(1, "txn-a", TRANSACTION), 1))
        assert (err, message, node) == (TXN_DENIED, MESSAGE, -1), (err, message, node)
        err, message, node = w.parse_find_coordinator_v1(c.call(w.find_coordinator_v1(2, "group-a", GROUP), 2))
        assert (err, node) == (0, 1), (err, message, node)


def batched_keys(broker):
    with w.Connection(broker.port) as c:
        out = w.parse_find_coordinator_v4(c.call(w.find_coordinator_v4(3, ["txn-a", "txn-b"], TRANSACTION), 3))
        assert out == [("txn-a", -1, TXN_DENIED, MESSAGE), ("txn-b", -1, TXN_DENIED, MESSAGE)], out
        out = w.parse_find_coordinator_v4(c.call(w.find_coordinator_v4(4, ["group-a"], GROUP), 4))
        assert [(k, n, e) for k, n, e, _ in out] == [("group-a", 1, 0)], out


def main():
    with Runnel() as broker:
        rc = run_tests([
            ("v1: a transactional id is refused with 53, a group is found", lambda: single_key(broker)),
            ("v4: each transactional key is refused with 53, a group is found", lambda: batched_keys(broker)),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
