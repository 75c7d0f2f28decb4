"""kcat against a real Runnel: metadata listing (-L, -L -J), and produce (-P)
then consume (-C -e) round trips with keys (-K) and headers (-H), in every
codec kcat's librdkafka has, checked exactly, also after a restart.

usage: /usr/bin/python3 kcat_test.py <runnel binary>
"""

import json
import subprocess
import sys

from runnel_harness import Runnel, run_tests

PARTITIONS = 3


def kcat(broker, *args, input=None):
    p = subprocess.run(["kcat", "-b", broker.bootstrap, "-X", "broker.address.family=v4"] + list(args),
                       input=input, capture_output=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("kcat %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.decode()))
    return p.stdout


def lines_for(tag, n):
    """(key, value) pairs; key None means the line has no delimiter."""
    out = []
    for i in range(n):
        key = None if i % 17 == 5 else "key %s-%d é" % (tag, i)
        value = ("value %s %d " % (tag, i)) + "x" * (i % 50)
        out.append((key, value))
    return out


def produce(broker, topic, partition, pairs, headers=(), extra=()):
    args = ["-P", "-t", topic, "-p", str(partition), "-K", "\t"] + list(extra)
    for name, value in headers:
        args += ["-H", "%s=%s" % (name, value)]
    data = "".join((v if k is None else "%s\t%s" % (k, v)) + "\n" for k, v in pairs)
    kcat(broker, *args, input=data.encode())


def consume(broker, topic, partition):
    out = kcat(broker, "-C", "-t", topic, "-p", str(partition), "-o", "beginning", "-e", "-J")
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def check_partition(broker, topic, partition, pairs, headers=()):
    got = consume(broker, topic, partition)
    assert len(got) == len(pairs), "%s-%d: %d records back, %d produced" % (topic, partition, len(got), len(pairs))
    flat_headers = [x for h in headers for x in h]
    for offset, (rec, (key, value)) in enumerate(zip(got, pairs)):
        where = "%s-%d offset %d" % (topic, partition, offset)
        assert rec["topic"] == topic and rec["partition"] == partition, where
        assert rec["offset"] == offset, "%s: offset %s (gap, duplicate or reorder)" % (where, rec["offset"])
        assert rec["key"] == key, "%s: key %r != %r" % (where, rec["key"], key)
        assert rec["payload"] == value, "%s: payload %r != %r" % (where, rec["payload"], value)
        assert rec["tstype"] == "create", where
        if flat_headers:
            assert rec.get("headers") == flat_headers, "%s: headers %r != %r" % (where, rec.get("headers"), flat_headers)
        else:
            assert not rec.get("headers"), "%s: unexpected headers %r" % (where, rec.get("headers"))


def main():
    broker = Runnel(overrides={"num.partitions": str(PARTITIONS)})
    with broker:
        produced = {}  # (topic, partition) -> (pairs, headers)

        def metadata_before_any_topic():
            md = json.loads(kcat(broker, "-L", "-J"))
            assert md["topics"] == [], md
            assert md["brokers"] == [{"id": 1, "name": broker.bootstrap}], md
            assert md["controllerid"] == 1, md

        def roundtrip_keys_and_headers():
            hdrs = [("trace", "abc-123"), ("empty", ""), ("trace", "second value")]
            for partition in range(PARTITIONS):
                pairs = lines_for("p%d" % partition, 300 + partition)
                h = hdrs if partition != 1 else ()
                produce(broker, "kcat-roundtrip", partition, pairs, headers=h)
                produced[("kcat-roundtrip", partition)] = (pairs, h)
            # A second produce appends after the first.
            more = lines_for("more", 50)
            produce(broker, "kcat-roundtrip", 0, more, headers=hdrs)
            pairs, h = produced[("kcat-roundtrip", 0)]
            produced[("kcat-roundtrip", 0)] = (pairs + more, h)
            for (topic, partition), (pairs, h) in produced.items():
                check_partition(broker, topic, partition, pairs, h)

        def roundtrip_each_codec():
            for codec in ["none", "gzip", "snappy", "lz4", "zstd"]:
                topic = "kcat-" + codec
                pairs = lines_for(codec, 400)
                hdrs = [("codec", codec)]
                produce(broker, topic, 2, pairs, headers=hdrs, extra=["-z", codec])
                produced[(topic, 2)] = (pairs, hdrs)
                check_partition(broker, topic, 2, pairs, hdrs)

        def metadata_listing():
            md = json.loads(kcat(broker, "-L", "-J"))
            assert md["originating_broker"]["id"] == 1, md
            assert md["brokers"] == [{"id": 1, "name": broker.bootstrap}], md
            topics = {t["topic"]: t for t in md["topics"]}
            want = {t for t, _ in produced}
            assert set(topics) == want, (sorted(topics), sorted(want))
            for name, t in topics.items():
                assert "error" not in t, t
                parts = sorted(t["partitions"], key=lambda p: p["partition"])
                assert [p["partition"] for p in parts] == list(range(PARTITIONS)), t
                for p in parts:
                    assert p["leader"] == 1 and p["replicas"] == [{"id": 1}] and p["isrs"] == [{"id": 1}], p
            text = kcat(broker, "-L").decode()
            assert " 1 brokers:\n  broker 1 at %s (controller)\n" % broker.bootstrap in text, text
            assert " %d topics:\n" % len(want) in text, text
            for name in want:
                assert '  topic "%s" with %d partitions:\n' % (name, PARTITIONS) in text, text
            assert "    partition 0, leader 1, replicas: 1, isrs: 1\n" in text, text
            one = json.loads(kcat(broker, "-L", "-J", "-t", "kcat-roundtrip"))
            assert [t["topic"] for t in one["topics"]] == ["kcat-roundtrip"], one

        def everything_after_restart():
            broker.restart(graceful=True)
            for (topic, partition), (pairs, h) in produced.items():
                check_partition(broker, topic, partition, pairs, h)

        rc = run_tests([
            ("metadata before any topic (-L -J)", metadata_before_any_topic),
            ("produce/consume with keys and headers (-P -K -H, -C -e -J)", roundtrip_keys_and_headers),
            ("produce/consume in each codec (-z)", roundtrip_each_codec),
            ("metadata listing (-L, -L -J, -L -t)", metadata_listing),
            ("every record again after a graceful restart", everything_after_restart),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
