"""An out-of-range decimal topic config is refused and the broker restarts
(issue 12, item 8).

min.cleanable.dirty.ratio=1.5 (or -0.5) used to pass its [0, 1] range
after truncation to an integer; the handler then threw, the connection
was dropped with no reply and no log line (and held open, so a graceful
stop waited request.timeout.ms for it), and the value reached
runnel-topics.json with the next topic creation, after which every start
exited 1. Kafka answers INVALID_CONFIG with ConfigDef's Range message.

request.timeout.ms is raised so that a connection held open would make
the graceful stop outlast the harness's bound: that bound is on a hang,
not on the time a stop normally takes.

usage: /usr/bin/python3 invalid_config_restart_test.py <runnel binary>
"""

import sys

import kafka_wire as w
from runnel_harness import Runnel, run_tests

INVALID_CONFIG = 40
TOPIC_RESOURCE = 2
SET = 0
STOP_BOUND = 60.0


def incremental_alter_configs_v0(corr, topic, configs):
    """configs: [(name, op, value)] on one TOPIC resource, validate_only false."""
    entries = [w.string(n) + w.i8(op) + w.string(v) for n, op, v in configs]
    resource = w.i8(TOPIC_RESOURCE) + w.string(topic) + w.array(entries)
    return w.request(44, 0, corr, w.array([resource]) + w.i8(0))


def parse_incremental_alter_configs_v0(body):
    """-> [(error_code, error_message, resource_type, resource_name)]"""
    r = w.Reader(body)
    r.i32()  # throttle
    out = r.array(lambda r: (r.i16(), r.string(), r.i8(), r.string()))
    assert r.done(), "trailing bytes in IncrementalAlterConfigs v0 response"
    return out


def create(c, corr, name):
    (result,) = w.parse_create_topics_v4(c.call(w.create_topics_v4(corr, [(name, 1, 1)]), corr))
    assert result[1] == 0, result


def test_out_of_range_ratio_refused_and_restart():
    with Runnel(overrides={"request.timeout.ms": "120000"}) as b:
        with w.Connection(b.port) as c:
            create(c, 1, "ratio")
            for corr, value, message in [
                    (2, "1.5", "Value must be no more than 1"),
                    (3, "-0.5", "Value must be at least 0")]:
                frame = incremental_alter_configs_v0(corr, "ratio", [("min.cleanable.dirty.ratio", SET, value)])
                (resp,) = parse_incremental_alter_configs_v0(c.call(frame, corr))
                assert resp[0] == INVALID_CONFIG, resp
                assert resp[1] == "Invalid value %s for configuration min.cleanable.dirty.ratio: %s" % (
                    value, message), resp
            # In range still applies.
            frame = incremental_alter_configs_v0(4, "ratio", [("min.cleanable.dirty.ratio", SET, "0.75")])
            (resp,) = parse_incremental_alter_configs_v0(c.call(frame, 4))
            assert resp[0] == 0, resp
            # The next creation rewrites runnel-topics.json with every topic's overrides.
            create(c, 5, "after")
        rc = b.stop(timeout=STOP_BOUND)
        assert rc == 0, "graceful stop exited %s" % rc
        b.start()  # fails if the stored configs cannot be opened
        with w.Connection(b.port) as c:
            topics = w.parse_metadata_v1_topics(c.call(w.metadata_v1(6, ["ratio", "after"]), 6))
            assert topics["ratio"][0] == 0 and topics["after"][0] == 0, topics
        assert "0.75" in open(b.log_dir + "/runnel-topics.json").read()


if __name__ == "__main__":
    sys.exit(run_tests([
        ("an out-of-range ratio is INVALID_CONFIG and the broker restarts",
         test_out_of_range_ratio_refused_and_restart),
    ]))
