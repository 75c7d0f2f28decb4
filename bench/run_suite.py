#!/usr/bin/python3
"""Runnel against Apache Kafka 4.x (KRaft, from the Maven Central jars) and
librdkafka's in-memory mock cluster: the same workloads, in the same run,
alternating A B C A B C so drift in a shared machine hits every system.

    bench/run_suite.py            # the full suite (2 rounds; 1 GiB backlog)
    bench/run_suite.py --quick    # small sizes, one round: for trying it out

Builds the release preset (runnel, loadgen), fetches Kafka's jars once (see
compat-tests/kafka_harness.py). Each round starts Runnel (fsync on acks=all,
its default), Runnel with runnel.acks.all.fsync=false and Kafka fresh on
empty data dirs, timing start to first produce and reading idle RSS; runs
the produce and end-to-end workloads with the systems taking turns inside
each workload (each workload on its own topic; the brokers not under load
sit idle); stops them by pid; then, per system, a fresh broker takes the
consume backlog, is killed with SIGKILL and is timed through recovery. Writes bench/results/<date>.json (every
run, with the machine's load average around it), <date>.md (medians and the
ratios Runnel/Kafka and Runnel/mock) and <date>.png (gnuplot). A benchmark,
never part of the test suite. Runs under /usr/bin/python3 (Debian's).
"""

import argparse
import datetime
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
import kafka_harness  # noqa: E402
import runnel_harness  # noqa: E402

# What each system does with acks=all, stated in the table.
DURABILITY = {
    "runnel": "acks=all records fsynced (fdatasync, group commit) before the acknowledgement: Runnel's default",
    "runnel-nofsync": "runnel.acks.all.fsync=false: page cache only, like Kafka",
    "kafka": "Kafka's defaults: page cache, no fsync on acknowledgement (flush left to the OS and segment roll)",
    "mock": "librdkafka's mock cluster: memory only, keeps the last 5 MiB per partition",
}
LABEL = {"runnel": "Runnel", "runnel-nofsync": "Runnel (no fsync)", "kafka": "Kafka 4.1.1", "mock": "mock"}


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def setup_and_build(args):
    """The suite's own setup: the project's packages, gnuplot for the chart, the release build."""
    subprocess.run(["bash", os.path.join(REPO, "scripts", "setup")], check=True)
    if subprocess.run(["dpkg-query", "-W", "-f=${Status}", "gnuplot-nox"], stdout=subprocess.PIPE,
                      stderr=subprocess.DEVNULL).stdout.decode().find("install ok installed") < 0:
        log("installing gnuplot-nox (the chart)")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "gnuplot-nox"], check=True,
                       env=env, stdout=subprocess.DEVNULL)
    if args.no_build:
        return
    subprocess.run(["cmake", "--preset", "release"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["nice", "cmake", "--build", "--preset", "release", "--target", "runnel", "loadgen"], cwd=REPO,
                   check=True, stdout=subprocess.DEVNULL)


# -- systems -------------------------------------------------------------------


class TimedRunnel(runnel_harness.Runnel):
    """Runnel, noting the CLOCK_MONOTONIC time at which the process is launched."""

    def start(self):
        self.launched_ns = time.monotonic_ns()
        return super().start()


class TimedKafka(kafka_harness.Kafka):
    """Kafka, noting when the server's JVM is launched (after the storage format,
    which kafka-storage.sh does once per installation, not at every start)."""

    def _java(self, main, *args):
        if main == "kafka.Kafka":
            self.launched_ns = time.monotonic_ns()
        return super()._java(main, *args)


class Systems:
    def __init__(self, args):
        self.runnel_binary = args.runnel
        self.kafka_cache = args.kafka_cache

    def new(self, name):
        """An unstarted broker for `name` with a fixed free port (so a probe can
        connect before it starts); None for the mock, which lives in loadgen."""
        if name == "mock":
            return None
        if name == "kafka":
            b = TimedKafka(cache_dir=self.kafka_cache, ready_timeout=180)
            b.port, b.controller_port = kafka_harness.free_port(), kafka_harness.free_port()
        else:
            overrides = {"runnel.acks.all.fsync": "false"} if name == "runnel-nofsync" else {}
            b = TimedRunnel(self.runnel_binary, overrides)
            b.port = kafka_harness.free_port()
        return b


# -- loadgen -------------------------------------------------------------------


def run_loadgen(loadgen, broker, extra, timeout, create_topic=True):
    target = ["--mock"] if broker is None else ["--bootstrap", broker.bootstrap] + (
        ["--create-topic"] if create_topic else [])
    cmd = [loadgen] + target + extra
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    lines = [l for l in p.stdout.decode().splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError("loadgen printed no result (exit %d): %s" % (p.returncode, p.stderr.decode()[-2000:]))
    result = json.loads(lines[-1])
    if not result.get("ok"):
        result["stderr"] = p.stderr.decode()[-2000:]
    return result


def probe(loadgen, broker, topic, start_fn, timeout=240):
    """Starts a probe producer, then the broker (start_fn); returns ms from the
    broker's launch to the first acknowledged produce."""
    p = subprocess.Popen([loadgen, "--mode", "probe", "--bootstrap", broker.bootstrap, "--topic", topic,
                          "--timeout", str(timeout)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ready, _, _ = select.select([p.stderr], [], [], 20)
        if not ready or b"probing" not in p.stderr.readline():
            raise RuntimeError("the probe did not start")
        start_fn()
        out, err = p.communicate(timeout=timeout + 10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    result = json.loads(out.decode().strip().splitlines()[-1])
    if not result["acked"]:
        raise RuntimeError("no produce was acknowledged: %s" % err.decode()[-1000:])
    return (result["acked_at_monotonic_ns"] - broker.launched_ns) / 1e6


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return None


def dir_bytes(path):
    """Bytes on disk (allocated blocks: preallocated sparse index files count
    for what they use)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


# -- workloads -------------------------------------------------------------------


def produce_args(size, acks, seconds, compression="none", idempotence=False):
    a = ["--mode", "produce", "--size", str(size), "--partitions", "6", "--acks", acks, "--duration", str(seconds),
         "--compression", compression, "--timeout", "300"]
    return a + (["--idempotence"] if idempotence else [])


def workloads(cfg):
    """(id, title, systems, loadgen args) of the workloads run on brokers that
    stay up for the round. Produce workloads run for a fixed time so the
    suite's length does not depend on how fast a system is."""
    s = cfg["produce_seconds"]
    three = ["runnel", "kafka", "mock"]
    four = ["runnel", "runnel-nofsync", "kafka", "mock"]
    w = [
        ("produce_100b_acks1", "Produce 100 B, 6 partitions, acks=1", three, produce_args(100, "1", s)),
        ("produce_100b_acksall", "Produce 100 B, acks=all", four, produce_args(100, "all", s)),
        ("produce_100b_acksall_idempotent", "Produce 100 B, acks=all, idempotent", four,
         produce_args(100, "all", s, idempotence=True)),
        ("produce_1k_acks1", "Produce 1 KiB, acks=1", three, produce_args(1024, "1", s)),
    ]
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        w.append(("produce_100b_acks1_" + codec, "Produce 100 B, acks=1, " + codec, three,
                  produce_args(100, "1", s, compression=codec)))
    w.append(("e2e_latency", "End-to-end latency at half Kafka's max rate (100 B, acks=1)", three, None))
    return w


def human_bytes(n):
    return "%d GiB" % (n >> 30) if n >= 1 << 30 and n % (1 << 30) == 0 else "%d MiB" % (n >> 20)


def record(wid, system, rnd):
    return {"workload": wid, "system": system, "round": rnd, "load_before": loadavg()}


def failed(rec, e, broker=None):
    rec["error"] = "%s: %s" % (type(e).__name__, e)
    log("  %s on %s failed: %s" % (rec["workload"], rec["system"], e))
    if broker is not None:
        broker._dump()


def close(broker, rec=None):
    if broker is None:
        return
    try:
        broker.close()
    except Exception as e:
        if rec is not None:
            rec.setdefault("error", "stop: %s" % e)


def steady_round(cfg, systems, loadgen, rnd, runs):
    """Starts every broker fresh (timing start to first produce and reading
    idle RSS), then runs the steady workloads with the systems alternating
    inside each workload, each workload on its own topic; stops them all."""
    brokers = {}
    try:
        for name in ("runnel", "runnel-nofsync", "kafka"):
            b = systems.new(name)
            rec = record("startup", name, rnd)
            log("start, round %d: %s" % (rnd, name))
            try:
                rec["start_to_first_produce_ms"] = probe(loadgen, b, "probe", b.start)
                time.sleep(2)
                rec["idle_rss_mib"] = rss_mib(b.proc.pid)
                brokers[name] = b
            except Exception as e:
                failed(rec, e, b)
                close(b)
            rec["load_after"] = loadavg()
            if name != "runnel-nofsync":  # the same binary as runnel: one startup row
                runs.append(rec)
        for wid, title, names, extra in workloads(cfg):
            if cfg["only"] and wid not in cfg["only"]:
                continue
            if wid == "e2e_latency":
                if "e2e_rate" not in cfg:
                    kmax = median(runs, "produce_100b_acks1", "kafka", ["result", "produce", "records_per_s"]) or \
                        median(runs, "produce_100b_acks1", "runnel", ["result", "produce", "records_per_s"]) or 100000
                    cfg["e2e_rate"] = int(kmax / 2)
                extra = ["--mode", "e2e", "--size", "100", "--partitions", "6", "--acks", "1", "--rate",
                         str(cfg["e2e_rate"]), "--duration", str(cfg["e2e_seconds"]), "--timeout", "300"]
            for name in names:
                if name != "mock" and name not in brokers:
                    continue
                log("%s, round %d: %s" % (wid, rnd, name))
                rec = record(wid, name, rnd)
                try:
                    rec["result"] = run_loadgen(loadgen, brokers.get(name), extra + ["--topic", wid], timeout=900)
                    if not rec["result"].get("ok"):
                        rec["error"] = rec["result"].get("stderr", "loadgen reported failure")
                except Exception as e:
                    failed(rec, e)
                rec["load_after"] = loadavg()
                runs.append(rec)
    finally:
        for b in brokers.values():
            close(b)


def backlog_round(cfg, systems, loadgen, rnd, runs):
    """Per system, a fresh broker: write the backlog, read it back (timed),
    SIGKILL, and time the restart to the first acknowledged produce."""
    records = cfg["backlog_bytes"] // 1024
    extra = ["--mode", "consume", "--size", "1024", "--partitions", "6", "--records", str(records),
             "--topic", "backlog", "--timeout", "900"]
    for name in ("runnel", "kafka", "mock"):
        log("consume_1k_backlog, round %d: %s" % (rnd, name))
        rec = record("consume_1k_backlog", name, rnd)
        broker = systems.new(name)
        try:
            if broker is not None:
                broker.start()
            rec["result"] = run_loadgen(loadgen, broker, extra, timeout=1800)
            if not rec["result"].get("ok"):
                rec["error"] = rec["result"].get("stderr", "loadgen reported failure")
            elif broker is not None:
                rec["log_bytes"] = dir_bytes(broker.log_dir)
                broker.kill9()
                rec["recovery_ms"] = probe(loadgen, broker, "backlog", broker.start)
        except Exception as e:
            failed(rec, e, broker)
        finally:
            close(broker, rec)
        rec["load_after"] = loadavg()
        runs.append(rec)


def metric_values(runs, wid, system, path):
    out = []
    for r in runs:
        if r["workload"] != wid or r["system"] != system or "error" in r:
            continue
        v = r
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        if v is not None:
            out.append(v)
    return out


def median(runs, wid, system, path):
    v = metric_values(runs, wid, system, path)
    return statistics.median(v) if v else None


class Runs(list):
    """The runs so far, saved after each one, so an interrupted suite still
    leaves its numbers (bench/run_suite.py --from-json reports on them)."""

    def __init__(self, path, cfg):
        super().__init__()
        self.path, self.cfg = path, cfg

    def append(self, rec):
        super().append(rec)
        with open(self.path, "w") as f:
            json.dump({"config": self.cfg, "runs": list(self)}, f, indent=1)


def run_suite(cfg, args):
    loadgen = os.path.join(args.build, "bench", "loadgen")
    systems = Systems(args)
    cfg["started_unix"] = time.time()
    runs = Runs(cfg["partial"], cfg)
    started = time.monotonic()
    for rnd in range(1, cfg["rounds"] + 1):
        steady_round(cfg, systems, loadgen, rnd, runs)
        if not cfg["only"] or "consume_1k_backlog" in cfg["only"]:
            backlog_round(cfg, systems, loadgen, rnd, runs)
    cfg["suite_seconds"] = round(time.monotonic() - started)
    return runs


# -- report ------------------------------------------------------------------------

# (label, workload, path to the number, unit, higher is better, goal vs Kafka, goal vs mock)
def rows(cfg):
    rps = ["result", "produce", "records_per_s"]
    r = [
        ("Produce 100 B acks=1", "produce_100b_acks1", rps, "records/s", True, ">= 1.5", ">= 0.8"),
        ("Produce 100 B acks=all (Runnel fsync)", "produce_100b_acksall", rps, "records/s", True, ">= 1.0", ""),
        ("Produce 100 B acks=all (Runnel no fsync)", "produce_100b_acksall", rps, "records/s", True, "", ""),
        ("Produce 100 B acks=all idempotent (Runnel fsync)", "produce_100b_acksall_idempotent", rps, "records/s",
         True, "", ""),
        ("Produce 100 B acks=all idempotent (Runnel no fsync)", "produce_100b_acksall_idempotent", rps,
         "records/s", True, "", ""),
        ("Produce 1 KiB acks=1", "produce_1k_acks1", ["result", "produce", "mb_per_s"], "MB/s", True, "", ""),
    ]
    for c in ("gzip", "snappy", "lz4", "zstd"):
        r.append(("Produce 100 B acks=1 " + c, "produce_100b_acks1_" + c, rps, "records/s", True, "", ""))
    r += [
        ("Consume %s backlog, 1 KiB records" % human_bytes(cfg["backlog_bytes"]), "consume_1k_backlog",
         ["result", "consume", "mb_per_s"], "MB/s", True, ">= 2.0", ""),
        ("End-to-end p99 at %s records/s" % format(cfg.get("e2e_rate", 0), ","), "e2e_latency",
         ["result", "consume", "e2e_p99_ms"], "ms", False, "<= 0.2", ""),
        ("End-to-end p50", "e2e_latency", ["result", "consume", "e2e_p50_ms"], "ms", False, "", ""),
        ("End-to-end p99.9", "e2e_latency", ["result", "consume", "e2e_p999_ms"], "ms", False, "", ""),
        ("Produce p99 (send to ack) at that rate", "e2e_latency", ["result", "produce", "p99_ms"], "ms", False, "",
         ""),
        ("Idle RSS", "startup", ["idle_rss_mib"], "MiB", False, "", ""),
        ("Start to first produce", "startup", ["start_to_first_produce_ms"], "ms", False, "", ""),
        ("Recovery after SIGKILL, %s of log" % human_bytes(cfg["backlog_bytes"]), "consume_1k_backlog",
         ["recovery_ms"], "ms", False, "", ""),
    ]
    return r


def fmt(v, unit):
    if v is None:
        return "-"
    if unit in ("records/s",):
        return format(int(round(v)), ",")
    if unit == "ms" and v < 10:
        return "%.2f" % v
    return format(round(v, 1), ",")


def ratio(a, b):
    return a / b if a is not None and b else None


def round_ratio(runs, wid, a, b, path):
    """The median over rounds of a's number over b's in the same round: on a
    shared machine whose load drifts between rounds, each round's pair saw
    the same load, so this holds up better than a ratio of medians."""
    rs = round_ratios(runs, wid, a, b, path)
    return statistics.median(rs) if rs else None


def round_ratios(runs, wid, a, b, path):
    """a's number over b's in each round that has both, in round order."""
    per_round = {}
    for r in runs:
        if r["workload"] == wid and "error" not in r and r["system"] in (a, b):
            v = r
            for k in path:
                v = v.get(k) if isinstance(v, dict) else None
            if v is not None:
                per_round.setdefault(r["round"], {})[r["system"]] = v
    rs = [ratio(x[a], x[b]) for _, x in sorted(per_round.items()) if a in x and b in x]
    return [x for x in rs if x is not None]


def summarize(cfg, runs):
    table = []
    for label, wid, path, unit, higher, goal_k, goal_m in rows(cfg):
        runnel_name = "runnel-nofsync" if "no fsync" in label else "runnel"
        vals = {s: median(runs, wid, s, path) for s in ("runnel", "runnel-nofsync", "kafka", "mock")}
        rv = vals[runnel_name]
        table.append({"label": label, "workload": wid, "unit": unit, "higher_is_better": higher,
                      "runnel_system": runnel_name, "runnel": rv, "kafka": vals["kafka"], "mock": vals["mock"],
                      "runnel_over_kafka": round_ratio(runs, wid, runnel_name, "kafka", path),
                      "runnel_over_mock": round_ratio(runs, wid, runnel_name, "mock", path),
                      "goal_vs_kafka": goal_k, "goal_vs_mock": goal_m,
                      "rounds": len(metric_values(runs, wid, runnel_name, path))})
    # Issue 6: idempotent over non-idempotent (acks=all both), and each codec's rate.
    idem = {}
    for s in ("runnel", "runnel-nofsync", "kafka", "mock"):
        per_round = []
        for rnd in sorted({r["round"] for r in runs}):
            one = [r for r in runs if r["round"] == rnd]
            per_round.append(ratio(
                median(one, "produce_100b_acksall_idempotent", s, ["result", "produce", "records_per_s"]),
                median(one, "produce_100b_acksall", s, ["result", "produce", "records_per_s"])))
        per_round = [x for x in per_round if x is not None]
        idem[s] = statistics.median(per_round) if per_round else None
    codecs = {}
    for s in ("runnel", "kafka", "mock"):
        none = median(runs, "produce_100b_acks1", s, ["result", "produce", "records_per_s"])
        codecs[s] = {"none": none}
        for c in ("gzip", "snappy", "lz4", "zstd"):
            codecs[s][c] = median(runs, "produce_100b_acks1_" + c, s, ["result", "produce", "records_per_s"])
    return {"table": table, "idempotent_over_plain": idem, "codec_records_per_s": codecs}


def weakest(summary):
    """The row furthest below parity with Kafka, counting lower-is-better rows inverted."""
    worst = None
    for row in summary["table"]:
        r = row["runnel_over_kafka"]
        if r is None:
            continue
        score = r if row["higher_is_better"] else 1 / r
        if worst is None or score < worst[0]:
            worst = (score, row["label"])
    return worst


def write_markdown(path, cfg, machine, summary, png_name, runs):
    t = ["# Runnel vs Apache Kafka vs librdkafka's mock: %s" % cfg["date"], ""]
    t.append("`%s` (%s mode, %d round(s); within each workload the systems take turns, and each round "
             "starts every broker fresh on an empty data dir). Raw runs: [%s](%s)." %
             (cfg["command"], "quick" if cfg["quick"] else "full", cfg["rounds"], os.path.basename(cfg["json"]),
              os.path.basename(cfg["json"])))
    t.append("")
    t.append("Machine: %s, %d cores, %s, shared: load average %.1f at the start, %.1f at the end, median %.1f "
             "across runs (a load of 2 means both cores are already busy before the benchmark's own processes). "
             "%s" %
             (machine["cpu"], machine["cores"], machine["memory"], machine["load_start"], machine["load_end"],
              machine["load_median"], "The suite took %d s." % cfg["suite_seconds"] if cfg["suite_seconds"] else ""))
    if cfg.get("interrupted"):
        t.append("**The run was interrupted: the table holds the %d runs that completed.**" % cfg["completed_runs"])
        t.append("")
    t.append("Runnel %s (release build), Apache Kafka %s (KRaft, single node, -Xmx1G, shipped server.properties), "
             "librdkafka %s as the client for all three and as the mock cluster." %
             (machine["runnel_commit"], machine["kafka_version"], machine["librdkafka"]))
    t.append("")
    t.append("Durability with acks=all:")
    for s in ("runnel", "runnel-nofsync", "kafka", "mock"):
        t.append("- **%s**: %s." % (LABEL[s], DURABILITY[s]))
    t.append("")
    t.append("Numbers are medians over the rounds (with two rounds, their mean). Ratios are Runnel/Kafka and "
             "Runnel/mock of the row's number taken within each round (both systems under the same load), then "
             "the median over rounds: above 1 is better for throughput, below 1 is better for ms and MiB. "
             "Per-round numbers are in the JSON.")
    t.append("")
    t.append("| Workload | unit | Runnel | Kafka | mock | Runnel/Kafka | goal | Runnel/mock | goal |")
    t.append("|---|---|---:|---:|---:|---:|---|---:|---|")
    for row in summary["table"]:
        rk = row["runnel_over_kafka"]
        rm = row["runnel_over_mock"]
        t.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            row["label"], row["unit"], fmt(row["runnel"], row["unit"]), fmt(row["kafka"], row["unit"]),
            fmt(row["mock"], row["unit"]), "**%.2f**" % rk if rk is not None else "-", row["goal_vs_kafka"],
            "**%.2f**" % rm if rm is not None else "-", row["goal_vs_mock"]))
    w = weakest(summary)
    if w:
        t.append("")
        t.append("Weakest against Kafka: **%s** (%.2f of Kafka's, counting lower-is-better rows inverted)." % (w[1],
                                                                                                              w[0]))
    t.append("")
    t.append("## Producer guarantees (issue 6)")
    t.append("")
    t.append("Idempotent over non-idempotent produce throughput, both acks=all, same run (goal for Runnel: at "
             "least 0.95):")
    t.append("")
    t.append("| | Runnel | Runnel (no fsync) | Kafka | mock |")
    t.append("|---|---:|---:|---:|---:|")
    t.append("| idempotent / plain (per round, median) | %s |" % " | ".join(
        "%.2f" % v if v is not None else "-" for v in (summary["idempotent_over_plain"][s] for s in
                                                       ("runnel", "runnel-nofsync", "kafka", "mock"))))
    t.append("")
    t.append("Produce throughput per codec (100 B text-like values, acks=1, records/s; in brackets: over "
             "uncompressed):")
    t.append("")
    t.append("| codec | Runnel | Kafka | mock | Runnel/Kafka |")
    t.append("|---|---:|---:|---:|---:|")
    cr = summary["codec_records_per_s"]
    for c in ("none", "gzip", "snappy", "lz4", "zstd"):
        cells = []
        for s in ("runnel", "kafka", "mock"):
            v, base = cr[s][c], cr[s]["none"]
            cells.append("-" if v is None else "%s (%.2f)" % (format(int(v), ","), v / base) if base else
                         format(int(v), ","))
        rk = round_ratio(runs, "produce_100b_acks1" + ("" if c == "none" else "_" + c), "runnel", "kafka",
                         ["result", "produce", "records_per_s"])
        t.append("| %s | %s | %s |" % (c, " | ".join(cells), "%.2f" % rk if rk is not None else "-"))
    t.append("")
    t.append("## How it was measured")
    t.append("")
    t.append("- `bench/loadgen` (librdkafka %s): produce workloads send for %s s each as fast as the client "
             "can (linger.ms=5, librdkafka's default batching, explicit round-robin over 6 partitions, a unique "
             "decimal key per record, values cut from pseudo-random text); records/s counts acknowledged records "
             "over the time until the last acknowledgement." % (machine["librdkafka"], cfg["produce_seconds"]))
    t.append("- Consume: the backlog is written first (acks=1, not timed), then a fresh consumer (assign, no group) "
             "reads it from offset 0; MB/s counts value bytes. The mock keeps only the last 5 MiB of each "
             "partition and answers each Fetch with one record batch per partition, so against it the consumer "
             "re-reads what is kept until it has read as many records: a volume from memory, not a ceiling.")
    t.append("- End to end: one process produces at a fixed rate (half Kafka's median acks=1 rate above) for %s s "
             "while a consumer reads; every value starts with its send time (CLOCK_MONOTONIC). librdkafka's "
             "consumer defaults (fetch.wait.max.ms=500): the mock does not wake a waiting Fetch when data "
             "arrives, so its latency here is no ceiling." % cfg["e2e_seconds"])
    t.append("- Start to first produce: a probe producer (reconnecting every few ms) is started first, then the "
             "broker; the time runs from launching the broker's process (Kafka's JVM, after its once-per-install "
             "storage format) to the first acknowledged record on a topic auto-created by that produce. Idle RSS "
             "is read from /proc 2 s later.")
    t.append("- Recovery: after the consume run the broker is killed with SIGKILL (the log holds the backlog) and "
             "started again on the same data dir; the time runs to the first acknowledged produce to the same "
             "topic.")
    t.append("")
    t.append("![throughput and latency per system](%s)" % png_name)
    t.append("")
    with open(path, "w") as f:
        f.write("\n".join(t))


def write_chart(path, cfg, summary, runs):
    """Six panels with gnuplot: produce records/s, consume MB/s, end-to-end latency, start, recovery, RSS."""
    work = tempfile.mkdtemp(prefix="runnel-bench-chart-")
    systems = ["runnel", "runnel-nofsync", "kafka", "mock"]

    def cell(v, scale=1.0):
        return "-" if v is None else "%.6g" % (v * scale)

    rps = ["result", "produce", "records_per_s"]
    prod = [("100B a=1", "produce_100b_acks1"), ("100B a=all", "produce_100b_acksall"),
            ("a=all idem", "produce_100b_acksall_idempotent"), ("1KiB a=1", "produce_1k_acks1"),
            ("gzip", "produce_100b_acks1_gzip"), ("snappy", "produce_100b_acks1_snappy"),
            ("lz4", "produce_100b_acks1_lz4"), ("zstd", "produce_100b_acks1_zstd")]
    with open(os.path.join(work, "produce.dat"), "w") as f:
        for label, wid in prod:
            f.write('"%s" %s\n' % (label, " ".join(cell(median(runs, wid, s, rps), 1e-3) for s in systems)))
    with open(os.path.join(work, "consume.dat"), "w") as f:
        f.write('"consume 1KiB" %s\n' % " ".join(
            cell(median(runs, "consume_1k_backlog", s, ["result", "consume", "mb_per_s"])) for s in systems))
        f.write('"fill 1KiB a=1" %s\n' % " ".join(
            cell(median(runs, "consume_1k_backlog", s, ["result", "fill", "mb_per_s"])) for s in systems))
    with open(os.path.join(work, "e2e.dat"), "w") as f:
        for p, key in (("p50", "e2e_p50_ms"), ("p99", "e2e_p99_ms"), ("p99.9", "e2e_p999_ms")):
            f.write('"%s" %s\n' % (p, " ".join(cell(median(runs, "e2e_latency", s, ["result", "consume", key]))
                                               for s in systems)))
    for name, label, workload, key in (("start.dat", "start to produce", "startup", "start_to_first_produce_ms"),
                                       ("recovery.dat", "recovery", "consume_1k_backlog", "recovery_ms"),
                                       ("rss.dat", "idle RSS", "startup", "idle_rss_mib")):
        with open(os.path.join(work, name), "w") as f:
            f.write('"%s" %s\n' % (label, " ".join(cell(median(runs, workload, s, [key])) for s in systems)))
    bars = ["'%%s' using %d:xtic(1) title '%s' lc rgb '%s'" % (i + 2, LABEL[s], c)
            for i, (s, c) in enumerate(zip(systems, ["#1f77b4", "#9ecae1", "#d62728", "#7f7f7f"]))]
    # Each bar's value above it: bar i of a cluster stands (i - (n-1)/2) / (n + gap) from the cluster's x.
    values = ["'%%s' using ($0 + %g):%d:(sprintf($%d >= 100 ? '%%.0f' : '%%.3g', $%d)) with labels offset 0,0.6 "
              "font ',8' notitle" % ((i - (len(systems) - 1) / 2) / (len(systems) + 1), i + 2, i + 2, i + 2)
              for i in range(len(systems))]

    def panel(name, labelled=True):
        """The panel's plot command, or an empty frame saying so when nothing was measured."""
        data = os.path.join(work, name)
        with open(data) as f:
            if any(v != "-" for line in f for v in line.rsplit('"', 1)[1].split()):
                return ("plot " + ", ".join(bars + (values if labelled else []))).replace("%s", data)
        return ("set xrange [0:1]; set yrange [0:1]; set label 1 'not measured in this run' at graph 0.5,0.5 center; "
                "plot 1/0 notitle; unset label 1; set autoscale x; set yrange [0:*]")

    # Every value axis starts at zero (a bar's length is its value) and the
    # legend stands right of the plot area, never over a bar.
    script = """
set terminal pngcairo size 1800,1000 font ',10'
set output '%(out)s'
set datafile missing '-'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set key outside right top vertical Left reverse
set grid ytics
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
set multiplot layout 2,3 title 'Runnel vs Kafka 4.1.1 vs librdkafka mock, %(date)s (%(mode)s; load avg %(load).1f on 2 cores)'
set title 'Produce throughput (k records/s, higher is better)'
set xtics rotate by -30
%(p_prod)s
set title 'Consume and backlog fill (MB/s, higher is better)'
set xtics norotate
%(p_cons)s
set title 'End-to-end latency at %(rate)s records/s (ms, lower is better)'
%(p_e2e)s
set title 'Start to first produce (ms, lower is better)'
%(p_start)s
set title 'Recovery after SIGKILL (ms, lower is better)'
%(p_recovery)s
set title 'Idle RSS (MiB, lower is better)'
%(p_rss)s
unset multiplot
""" % {"out": path, "date": cfg["date"], "mode": "quick" if cfg["quick"] else "full",
       "load": cfg.get("load_median", 0), "rate": format(cfg.get("e2e_rate", 0), ","),
       "p_prod": panel("produce.dat", labelled=False), "p_cons": panel("consume.dat"), "p_e2e": panel("e2e.dat"),
       "p_start": panel("start.dat"), "p_recovery": panel("recovery.dat"), "p_rss": panel("rss.dat")}
    with open(os.path.join(work, "chart.gp"), "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", os.path.join(work, "chart.gp")], check=True)
    shutil.rmtree(work, ignore_errors=True)


def machine_info(args, runs):
    def sh(cmd):
        try:
            return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO,
                                  shell=True).stdout.decode().strip()
        except OSError:
            return ""
    loads = [r["load_before"] for r in runs] + [r["load_after"] for r in runs]
    return {
        "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip(),
        "cores": os.cpu_count(),
        "memory": sh("free -g | awk '/Mem:/ {print $2 \" GiB\"}'"),
        "kernel": os.uname().release,
        "load_start": runs[0]["load_before"] if runs else loadavg(),
        "load_end": runs[-1]["load_after"] if runs else loadavg(),
        "load_median": statistics.median(loads) if loads else loadavg(),
        "runnel_commit": args.runnel_commit or (sh("git rev-parse --short HEAD") + (
            " (with local changes)" if sh("git status --porcelain") else "")),
        "runnel_binary": as_typed(args.runnel),
        "kafka_version": kafka_harness.KAFKA_VERSION,
        "librdkafka": sh("pkg-config --modversion rdkafka"),
    }


def checkout_root(path):
    """The git checkout (or worktree) holding `path`, or None."""
    d = path
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def as_typed(arg):
    """A command-line argument as a reader of the results would type it, never
    naming this machine's directories: a path inside a checkout relative to
    that checkout's root (where the README's commands run), a temporary one
    under $TMPDIR, any other absolute path by its last component."""
    if arg.startswith("--") and "=" in arg:
        opt, _, value = arg.partition("=")
        return opt + "=" + as_typed(value)
    if not os.path.isabs(arg):
        return arg
    path = os.path.normpath(arg)
    tmp = os.path.normpath(tempfile.gettempdir())
    if path == tmp or path.startswith(tmp + os.sep):
        return "$TMPDIR" + path[len(tmp):]
    root = checkout_root(path)
    return os.path.relpath(path, root) if root else os.path.basename(path)


def parse_common_args(ap):
    """Adds the options every Runnel-beside-Kafka bench takes (binaries, Kafka's
    jars, where results go, --from-json) to `ap`, and parses the command line."""
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"), help="release build dir")
    ap.add_argument("--runnel", help="runnel binary (default: <build>/runnel)")
    ap.add_argument("--runnel-commit", help="the commit --runnel was built from, for the report (default: HEAD)")
    ap.add_argument("--kafka-cache", help="Kafka jar cache (default: $RUNNEL_KAFKA_CACHE, else build/kafka-jars)")
    ap.add_argument("--from-json", help="only write the report, from a results or .partial.json file")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="where the results go")
    args = ap.parse_args()
    args.runnel = args.runnel or os.path.join(args.build, "runnel")
    default_cache = os.environ.get("RUNNEL_KAFKA_CACHE") or os.path.join(REPO, "build", "kafka-jars")
    args.kafka_cache = args.kafka_cache or default_cache
    return args


def bench_main(name, cfg, args, run, report):
    """The body of a Runnel-beside-Kafka bench's main(): `run(cfg, args,
    runs)` fills `runs` (saved as they come in <out>/<name>-<date>.partial.json),
    or --from-json reads them back; then `report(stem, cfg, machine, runs)`
    writes <stem>.json and <stem>.md, and the .md is printed. Returns the exit
    code: 1 when a run failed."""
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        cfg, runs = saved["config"], saved["runs"]
    else:
        os.makedirs(args.out, exist_ok=True)
        partial = os.path.join(args.out, "%s-%s.partial.json" % (name, cfg["date"]))
        runs = Runs(partial, cfg)
        run(cfg, args, runs)
        runs = list(runs)
        os.unlink(partial)
    stem = os.path.join(args.out, "%s-%s%s" % (name, cfg["date"], "-quick" if args.quick else ""))
    cfg["json"] = as_typed(stem + ".json")
    report(stem, cfg, machine_info(args, runs), runs)
    log("wrote %s.json and .md" % stem)
    with open(stem + ".md") as f:
        print(f.read())
    return 1 if any("error" in r for r in runs) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes and one round, for trying the suite")
    ap.add_argument("--rounds", type=int, help="runs of each workload per system (full: 2, quick: 1)")
    ap.add_argument("--backlog-mib", type=int, help="consume/recovery backlog (full: 1024, quick: 64)")
    ap.add_argument("--produce-seconds", type=float, help="length of each produce run (full: 6, quick: 2)")
    ap.add_argument("--e2e-seconds", type=float, help="length of the end-to-end run (full: 15, quick: 4)")
    ap.add_argument("--only", nargs="*", help="run only these workload ids (brokers still start and are timed)")
    ap.add_argument("--no-build", action="store_true", help="use the binaries already built")
    args = parse_common_args(ap)
    cfg = {
        "quick": args.quick,
        "rounds": args.rounds or (1 if args.quick else 2),
        "backlog_bytes": (args.backlog_mib or (64 if args.quick else 1024)) << 20,
        "produce_seconds": args.produce_seconds or (2 if args.quick else 6),
        "e2e_seconds": args.e2e_seconds or (4 if args.quick else 15),
        "command": " ".join(["bench/run_suite.py"] + [as_typed(a) for a in sys.argv[1:]]),
        "only": args.only or [],
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    }
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, cfg["date"] + ("-quick" if args.quick else ""))
    cfg["json"] = as_typed(stem + ".json")
    cfg["partial"] = stem + ".partial.json"
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        cfg.update({k: v for k, v in saved["config"].items() if k not in ("json", "partial")})
        runs = saved["runs"]
        if "suite_seconds" not in cfg:
            cfg["interrupted"] = True
            cfg["suite_seconds"] = None
            if "started_unix" in cfg:
                cfg["suite_seconds"] = round(os.path.getmtime(args.from_json) - cfg["started_unix"])
        stem = os.path.join(args.out, cfg["date"] + ("-quick" if cfg["quick"] else ""))
        cfg["json"] = as_typed(stem + ".json")
    else:
        setup_and_build(args)
        log("fetching Kafka's jars (cached after the first time)")
        kafka_harness.kafka_classpath(args.kafka_cache)
        runs = list(run_suite(cfg, args))
        os.unlink(cfg["partial"])
    cfg.pop("partial", None)
    machine = machine_info(args, runs)
    cfg["load_median"] = machine["load_median"]
    summary = summarize(cfg, runs)
    cfg["completed_runs"] = len(runs)
    with open(stem + ".json", "w") as f:
        json.dump({"config": cfg, "machine": machine, "durability": DURABILITY, "summary": summary, "runs": runs},
                  f, indent=1)
    write_chart(stem + ".png", cfg, summary, runs)
    write_markdown(stem + ".md", cfg, machine, summary, os.path.basename(stem + ".png"), runs)
    log("wrote %s.json, .md, .png" % stem)
    with open(stem + ".md") as f:
        print(f.read())
    failed = [r for r in runs if "error" in r]
    for r in failed:
        log("failed: %s on %s (round %d): %s" % (r["workload"], r["system"], r["round"], r["error"][:300]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
