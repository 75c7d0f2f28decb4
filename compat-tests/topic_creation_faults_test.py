"""Topic creation when a partition log cannot be opened (issue 12): a file
where a partition's directory goes, or no file descriptors left under
`ulimit -n 1024`. Kafka fails a log it cannot create with
KAFKA_STORAGE_ERROR (56); Runnel answers the request so, removes the
partitions it already made (the topic is in neither Metadata nor
runnel-topics.json, no partition directory is left to be reopened), and
stays up; a restart works. So for CreatePartitions (the topic keeps its
count) and Metadata's auto-creation. A Metadata request auto-creating
1,100 topics at that limit does not kill the broker either.

Needs storage's clean failure of Log::open (a failed open used to SIGSEGV
in Log's destructor). The ulimit case also needs the logs' descriptors
given back when they are closed (today only when destroyed): under the
ASan+UBSan build, a vptr check that misses UBSan's type cache opens a pipe,
and at the descriptor limit it aborts ("invalid vptr") before the undo can
free any.

usage: /usr/bin/python3 topic_creation_faults_test.py <runnel binary>
"""

import os
import sys

import kafka_wire as w
from runnel_harness import Runnel, run_tests
from topic_checks import SLOW, assert_absent, create, partition_dirs, topics_file

NONE = 0
KAFKA_STORAGE_ERROR = 56


def failed_open_is_undone():
    broker = Runnel()
    with broker:
        # A file where partition 5's directory goes: its log cannot be made.
        blocker = os.path.join(broker.log_dir, "blocked-5")
        with open(blocker, "w") as f:
            f.write("not a directory\n")
        res = create(broker, [("blocked", 10, 1)])
        assert res[0][:2] == ("blocked", KAFKA_STORAGE_ERROR), res
        assert broker.alive(), "the broker died"
        os.remove(blocker)
        assert_absent(broker, "blocked")
        broker.restart()
        assert_absent(broker, "blocked")
        # The name is free again.
        assert create(broker, [("blocked", 10, 1)]) == [("blocked", NONE, None)]

        # CreatePartitions: growing 2 -> 8 with partition 5 in the way.
        assert create(broker, [("grown", 2, 1)]) == [("grown", NONE, None)]
        blocker = os.path.join(broker.log_dir, "grown-5")
        with open(blocker, "w") as f:
            f.write("not a directory\n")
        with w.Connection(broker.port, timeout=SLOW) as c:
            res = w.parse_create_partitions_v1(c.call(w.create_partitions_v1(2, [("grown", 8)]), 2))
        assert res[0][:2] == ("grown", KAFKA_STORAGE_ERROR), res
        os.remove(blocker)
        assert partition_dirs(broker, "grown") == ["grown-0", "grown-1"], partition_dirs(broker, "grown")
        broker.restart()
        with w.Connection(broker.port) as c:
            assert w.parse_metadata_v1_topics(c.call(w.metadata_v1(3, ["grown"]), 3))["grown"] == (NONE, [0, 1])

        # Metadata's auto-creation with partition 0 in the way.
        blocker = os.path.join(broker.log_dir, "auto-0")
        with open(blocker, "w") as f:
            f.write("not a directory\n")
        with w.Connection(broker.port) as c:
            got = w.parse_metadata_v1_topics(c.call(w.metadata_v1(4, ["auto"]), 4))
        assert got["auto"][0] == KAFKA_STORAGE_ERROR, got
        os.remove(blocker)
        assert broker.alive(), "the broker died"
        assert topics_file(broker) == {"blocked", "grown"}, topics_file(broker)


def out_of_descriptors():
    broker = Runnel(max_open_files=1024)
    with broker:
        res = create(broker, [("fds", 1100, 1)])
        assert res[0][:2] == ("fds", KAFKA_STORAGE_ERROR), res
        assert broker.alive(), "the broker died"
        assert_absent(broker, "fds")
        broker.restart()
        assert_absent(broker, "fds")
        assert create(broker, [("after", 2, 1)]) == [("after", NONE, None)]

        # One Metadata request auto-creating 1,100 one-partition topics.
        names = ["auto-%d" % i for i in range(1100)]
        with w.Connection(broker.port, timeout=SLOW) as c:
            got = w.parse_metadata_v1_topics(c.call(w.metadata_v1(5, names), 5))
        assert broker.alive(), "the broker died auto-creating topics"
        errors = {err for err, _ in got.values()}
        assert errors <= {NONE, KAFKA_STORAGE_ERROR}, errors
        for name, (err, parts) in got.items():
            if err != NONE:
                assert not partition_dirs(broker, name), name
        broker.restart()


def main():
    sys.exit(run_tests([
        ("a partition that cannot be opened: KAFKA_STORAGE_ERROR, nothing left", failed_open_is_undone),
        ("ulimit -n 1024: 1,100 partitions fail cleanly; 1,100 auto-created topics", out_of_descriptors),
    ]))


if __name__ == "__main__":
    main()
