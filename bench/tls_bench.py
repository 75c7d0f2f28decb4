#!/usr/bin/python3
"""Produce and consume over TLS against plaintext, Runnel beside Apache Kafka
4.1.1, in one run (issue 15's TLS numbers).

Two brokers stay up for the whole run, each with a PLAINTEXT and an SSL
listener configured alike (the SSL keys of the compatibility matrix's
security columns, compat-tests/matrix/security_columns.py: a PKCS12 key
store made with the openssl CLI by compat-tests/test_certs.py, no client
authentication):

  Runnel:  one `runnel serve` (release build), its defaults;
  Kafka:   one combined broker+controller node in KRaft mode
           (compat-tests/kafka_harness.py: -Xmx1G, G1, jars from Maven
           Central cached in build/kafka-jars or $RUNNEL_KAFKA_CACHE), its
           shipped server.properties.

Four targets, (Runnel, Kafka) x (PLAINTEXT, SSL). Each broker first gets a
backlog of --backlog-mib MiB of --size byte values on 6 partitions (written
over PLAINTEXT, not timed); each target then reads it once, untimed (Kafka's
JIT warms up). Then --rounds rounds; in each, for every workload the four
targets take turns, in an order rotated every round:

  consume_1    one librdkafka consumer (confluent-kafka, its own process,
               no group) reads all 6 partitions from the beginning;
  consume_N    --clients consumers in parallel, processes of their own,
               each its share of the partitions: the broker's ceiling
               rather than one client's decryption thread;
  produce_1    one producer writes --produce-mib MiB with acks=1 to a fresh
               topic of 6 partitions (deleted afterwards);
  produce_N    --clients producers, each its share of the partitions.

Clients connect (and finish their TLS handshake) before a barrier; the clock
runs from the barrier until the last client is done. Each run records MiB/s
of values, the broker process's CPU seconds (utime+stime from
/proc/<pid>/stat, Kafka's JVM or runnel) per GiB of values, the clients' own
CPU per GiB, and the load average before and after. Runnel's log names the
path Fetch records take through TLS (kTLS sendfile or the copy), which the
report quotes.

Results: bench/results/tls_bench-<date>.json (every run; saved as it goes in
.partial.json) and .md (medians over rounds, and ratios taken within each
round, then the median). A benchmark, never part of the test suite.

  /usr/bin/python3 bench/tls_bench.py --runnel build/release/runnel   # --quick, --rounds N, --help
"""

import argparse
import datetime
import json
import multiprocessing
import os
import re
import socket
import ssl
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
sys.path.insert(0, os.path.join(REPO, "compat-tests", "matrix"))
import kafka_harness  # noqa: E402
import runnel_harness  # noqa: E402
import security_columns  # noqa: E402
from test_certs import Certs  # noqa: E402
from cluster_replication import cpu_seconds  # noqa: E402  (beside this file)
from run_suite import (as_typed, bench_main, log, loadavg, median, metric_values, parse_common_args,  # noqa: E402
                       record, round_ratio, round_ratios)

PARTITIONS = 6
SYSTEMS = ("runnel", "kafka")
PROTOCOLS = ("PLAINTEXT", "SSL")
TARGETS = tuple("%s-%s" % (s, p.lower()) for s in SYSTEMS for p in PROTOCOLS)
LABEL = {"runnel-plaintext": "Runnel PLAINTEXT", "runnel-ssl": "Runnel SSL",
         "kafka-plaintext": "Kafka PLAINTEXT", "kafka-ssl": "Kafka SSL"}
# Client settings, the same on every target: big fetches, no group.
CONSUMER = {"group.id": "tls-bench-unused", "enable.auto.commit": False, "fetch.max.bytes": 52428800,
            "max.partition.fetch.bytes": 10485760}
PRODUCER = {"acks": "1"}  # librdkafka's defaults otherwise (linger.ms=5, batch.size=1000000)
CLIENT_LIMIT = 600  # seconds any one client may take


def broker_settings(certs):
    """The matrix's SSL keys (the same on Runnel and Kafka) for a PLAINTEXT and an SSL listener."""
    s = {k: v for k, v in security_columns.broker_settings(certs).items() if k.startswith("ssl.")}
    s["listener.security.protocol.map"] = "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL"
    return s


def client_config(certs, port, protocol):
    c = {"bootstrap.servers": "127.0.0.1:%d" % port, "broker.address.family": "v4"}
    if protocol == "SSL":
        c.update({"security.protocol": "SSL", "ssl.ca.location": certs.ca[0],
                  "ssl.endpoint.identification.algorithm": "https"})
    return c


def negotiated(certs, port):
    """The TLS version and cipher an OpenSSL client (Python's ssl) gets on `port`."""
    ctx = ssl.create_default_context(cafile=certs.ca[0])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            return "%s %s" % (s.version(), s.cipher()[0])


class Brokers:
    """Runnel and Kafka, each with PLAINTEXT and SSL listeners, up for the whole run."""

    def __init__(self, args, certs):
        settings = broker_settings(certs)
        self.runnel = runnel_harness.Runnel(
            args.runnel, dict(settings, listeners="PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"),
            prefix="runnel-tls-bench-")
        self.runnel.die_with_parent = True
        self.kafka = kafka_harness.Kafka(args.kafka_cache, settings, listeners=("SSL",))
        self.certs = certs
        self.ports = {}

    def start(self):
        for name, b in (("runnel", self.runnel), ("kafka", self.kafka)):
            t0 = time.monotonic()
            b.start()
            self.ports[name] = b.listener_ports()
            log("%s up in %.1f s, listeners %s" % (name, time.monotonic() - t0, self.ports[name]))

    def close(self):
        for b in (self.runnel, self.kafka):
            try:
                b.close()
            except Exception as e:
                log("closing %s: %s" % (b.name, e))

    def broker(self, target):
        return self.runnel if target.startswith("runnel") else self.kafka

    def config(self, target):
        system, protocol = target.split("-")
        return client_config(self.certs, self.ports[system][protocol.upper()], protocol.upper())

    def admin_config(self, target):
        return dict(self.config(target.split("-")[0] + "-plaintext"), log_level=5)

    def fetch_path(self):
        """What Runnel's log says of its SSL listener's Fetch path."""
        m = re.search(r"listener SSL: (.*)", self.runnel.log_text())
        return m.group(1).strip() if m else None

    def tls(self):
        return {s: negotiated(self.certs, self.ports[s]["SSL"]) for s in SYSTEMS}


# -- clients, each in a process of its own ------------------------------------------


def thread_cpu(pid):
    """{thread id: utime + stime in seconds} of a live process (/proc/<pid>/task/*/stat)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread has ended
        out[tid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def busiest_thread(before, after):
    """CPU seconds of the thread that used the most between two thread_cpu() readings."""
    return max(after[t] - before.get(t, 0.0) for t in after)




def consume_worker(config, topic, partitions, barrier, out):
    from confluent_kafka import Consumer, TopicPartition
    try:
        c = Consumer(dict(config, **CONSUMER))
        # Connected (the TLS handshake done) and the amount known before the
        # clock starts. The assignment names each partition's first offset:
        # with OFFSET_BEGINNING, librdkafka 2.0.2 first looks the offset up,
        # and in about half the tries here its first record came 0.5 or 1 s
        # late, on either broker, which the clock would count.
        starts = {}
        for p in partitions:
            starts[p] = c.get_watermark_offsets(TopicPartition(topic, p), timeout=60)
        want = sum(hi - lo for lo, hi in starts.values())
        barrier.wait(CLIENT_LIMIT)
        start, cpu, threads = time.monotonic(), os.times(), thread_cpu(os.getpid())
        c.assign([TopicPartition(topic, p, lo) for p, (lo, _) in starts.items()])
        got = value_bytes = 0
        while got < want:
            # Small batches with a short wait: consume() waits for a whole
            # batch or its timeout, which would otherwise pad the last one.
            for m in c.consume(num_messages=100, timeout=0.02):
                if m.error():
                    raise RuntimeError(str(m.error()))
                got += 1
                value_bytes += len(m.value())
            if time.monotonic() - start > CLIENT_LIMIT:
                raise RuntimeError("%d of %d records in %d s" % (got, want, CLIENT_LIMIT))
        out.put(done(start, cpu, threads, got, value_bytes))
        c.close()
    except Exception as e:
        barrier.abort()
        out.put({"error": "%s: %s" % (type(e).__name__, e)})


def produce_worker(config, topic, partitions, records, size, barrier, out):
    from confluent_kafka import Producer
    try:
        p = Producer(dict(config, **PRODUCER))
        p.list_topics(topic, timeout=60)  # connected before the clock starts
        value = os.urandom(size)
        errors = []

        def delivered(err, _msg):
            if err is not None:
                errors.append(err)

        barrier.wait(CLIENT_LIMIT)
        start, cpu, threads = time.monotonic(), os.times(), thread_cpu(os.getpid())
        for i in range(records):
            while True:
                try:
                    p.produce(topic, value, partition=partitions[i % len(partitions)], on_delivery=delivered)
                    break
                except BufferError:
                    p.poll(0.05)
            p.poll(0)
        left = p.flush(CLIENT_LIMIT)
        if left or errors:
            raise RuntimeError("%d undelivered, %d failed: %s" % (left, len(errors), errors[:3]))
        out.put(done(start, cpu, threads, records, records * size))
    except Exception as e:
        barrier.abort()
        out.put({"error": "%s: %s" % (type(e).__name__, e)})


def done(start, cpu, threads, records, value_bytes):
    end, now = time.monotonic(), os.times()
    return {"start": start, "end": end, "records": records, "value_bytes": value_bytes,
            "cpu_s": now.user + now.system - cpu.user - cpu.system,
            "busiest_thread_s": busiest_thread(threads, thread_cpu(os.getpid()))}


def run_clients(broker, worker, per_client):
    """Starts one process per argument tuple, releases them together and
    returns the result of the run: MiB/s over the wall time from the first
    start to the last end, broker and client CPU seconds per GiB."""
    ctx = multiprocessing.get_context("spawn")  # no librdkafka state forked from this process
    out = ctx.Queue()
    barrier = ctx.Barrier(len(per_client) + 1)
    procs = [ctx.Process(target=worker, args=a + (barrier, out), daemon=True) for a in per_client]
    for p in procs:
        p.start()
    try:
        try:
            barrier.wait(CLIENT_LIMIT)
        except Exception:
            pass  # a client failed before the start: its error is in the queue
        cpu, threads = cpu_seconds(broker.proc.pid), thread_cpu(broker.proc.pid)
        results = [out.get(timeout=CLIENT_LIMIT + 60) for _ in procs]
        cpu, thread = cpu_seconds(broker.proc.pid) - cpu, busiest_thread(threads, thread_cpu(broker.proc.pid))
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
                p.join(10)
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        raise RuntimeError("; ".join(errors))
    seconds = max(r["end"] for r in results) - min(r["start"] for r in results)
    value_bytes = sum(r["value_bytes"] for r in results)
    gib = value_bytes / (1 << 30)
    client_cpu = sum(r["cpu_s"] for r in results)
    return {"clients": len(procs), "records": sum(r["records"] for r in results), "value_bytes": value_bytes,
            "seconds": round(seconds, 3), "mib_per_s": round(value_bytes / (1 << 20) / seconds, 1),
            "broker_cpu_s": round(cpu, 2), "broker_cpu_per_gib": round(cpu / gib, 3),
            "client_cpu_per_gib": round(client_cpu / gib, 3),
            "broker_cores": round(cpu / seconds, 2), "client_cores": round(client_cpu / seconds, 2),
            "broker_busiest_thread_cores": round(thread / seconds, 2),
            "client_busiest_thread_cores": round(max(r["busiest_thread_s"] / (r["end"] - r["start"])
                                                     for r in results), 2),
            "client_seconds": [round(r["end"] - r["start"], 3) for r in results]}


def shares(n):
    """The 6 partitions dealt to n clients."""
    return [list(range(i, PARTITIONS, n)) for i in range(n)]


# -- topics ------------------------------------------------------------------------


def create_topic(brokers, target, topic):
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient(brokers.admin_config(target))
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)], request_timeout=30)[topic].result(60)
    deadline = time.monotonic() + 60
    while True:  # every partition with a leader, so no client waits on one inside the clock
        t = admin.list_topics(topic, timeout=30).topics.get(topic)
        if t and t.error is None and len(t.partitions) == PARTITIONS and all(
                p.leader >= 0 for p in t.partitions.values()):
            return
        if time.monotonic() > deadline:
            raise RuntimeError("%s has no leader on every partition after 60 s" % topic)
        time.sleep(0.1)


def delete_topic(brokers, target, topic):
    from confluent_kafka.admin import AdminClient
    admin = AdminClient(brokers.admin_config(target))
    admin.delete_topics([topic], request_timeout=30)[topic].result(60)


# -- workloads ---------------------------------------------------------------------

BACKLOG = "backlog"


def consume(cfg, brokers, target, n):
    return run_clients(brokers.broker(target), consume_worker,
                       [(brokers.config(target), BACKLOG, ps) for ps in shares(n)])


def produce(cfg, brokers, target, n, topic, mib):
    create_topic(brokers, target, topic)
    records = (mib << 20) // cfg["size"]
    result = run_clients(brokers.broker(target), produce_worker,
                         [(brokers.config(target), topic, ps, records // n, cfg["size"]) for ps in shares(n)])
    return result


def workloads(cfg):
    n = cfg["clients"]
    return [
        ("consume_1", lambda b, t, r: consume(cfg, b, t, 1)),
        ("consume_%d" % n, lambda b, t, r: consume(cfg, b, t, n)),
        ("produce_1", lambda b, t, r: produce_and_delete(cfg, b, t, 1, r)),
        ("produce_%d" % n, lambda b, t, r: produce_and_delete(cfg, b, t, n, r)),
    ]


def produce_and_delete(cfg, brokers, target, n, rnd):
    topic = "produce-%s-%d-%d" % (target, n, rnd)
    try:
        return produce(cfg, brokers, target, n, topic, cfg["produce_mib"])
    finally:
        delete_topic(brokers, target, topic)


def run(cfg, args, runs):
    log("load average at the start: %.2f %.2f %.2f" % os.getloadavg())
    certs = Certs()
    brokers = Brokers(args, certs)
    started = time.monotonic()
    try:
        brokers.start()
        cfg["fetch_path"] = brokers.fetch_path()
        cfg["tls"] = brokers.tls()
        log("Runnel's SSL Fetch path: %s" % cfg["fetch_path"])
        log("negotiated: %s" % cfg["tls"])
        for system in SYSTEMS:
            target = system + "-plaintext"
            log("writing the %d MiB backlog to %s" % (cfg["backlog_mib"], system))
            rec = record("backlog", target, 0)
            rec["result"] = produce(cfg, brokers, target, cfg["clients"], BACKLOG, cfg["backlog_mib"])
            rec["load_after"] = loadavg()
            runs.append(rec)
        plan = [("warmup", lambda b, t, r: consume(cfg, b, t, 1))]
        for rnd in range(0, cfg["rounds"] + 1):
            order = TARGETS[rnd % 4:] + TARGETS[:rnd % 4]
            for wid, fn in (plan if rnd == 0 else workloads(cfg)):
                if rnd and cfg["only"] and wid.split("_")[0] not in cfg["only"]:
                    continue
                for target in order:
                    rec = record(wid, target, rnd)
                    try:
                        rec["result"] = fn(brokers, target, rnd)
                    except Exception as e:
                        rec["error"] = "%s: %s" % (type(e).__name__, e)
                    rec["load_after"] = loadavg()
                    log("round %d %-9s %-16s %s, load %.1f -> %.1f" % (
                        rnd, wid, LABEL[target], brief(rec), rec["load_before"], rec["load_after"]))
                    runs.append(rec)
    finally:
        brokers.close()
        certs.close()
    cfg["run_seconds"] = round(time.monotonic() - started)
    log("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


def brief(rec):
    if "error" in rec:
        return "failed: " + rec["error"][:300]
    r = rec["result"]
    return "%7.1f MiB/s (%.2f s), broker CPU %.2f s/GiB, clients %.2f s/GiB" % (
        r["mib_per_s"], r["seconds"], r["broker_cpu_per_gib"], r["client_cpu_per_gib"])


# -- report ------------------------------------------------------------------------

MIBS = ["result", "mib_per_s"]
BROKER_CPU = ["result", "broker_cpu_per_gib"]
CLIENT_CPU = ["result", "client_cpu_per_gib"]
# (ratio column, numerator, denominator)
RATIOS = [("Runnel SSL / Runnel PLAINTEXT", "runnel-ssl", "runnel-plaintext"),
          ("Runnel SSL / Kafka SSL", "runnel-ssl", "kafka-ssl"),
          ("Runnel PLAINTEXT / Kafka PLAINTEXT", "runnel-plaintext", "kafka-plaintext"),
          ("Kafka SSL / Kafka PLAINTEXT", "kafka-ssl", "kafka-plaintext")]
CONSUME_GOALS = {"Runnel SSL / Runnel PLAINTEXT": ">= 0.8", "Runnel SSL / Kafka SSL": ">= 2.0"}  # issue 15


def rows(cfg):
    """(label, workload, path, unit, goals per ratio column)"""
    n = cfg["clients"]
    out = []
    for wid, what in (("consume_1", "Consume, 1 consumer"), ("consume_%d" % n, "Consume, %d consumers" % n),
                      ("produce_1", "Produce acks=1, 1 producer"),
                      ("produce_%d" % n, "Produce acks=1, %d producers" % n)):
        goals = CONSUME_GOALS if wid.startswith("consume") else {}
        out += [(what, wid, MIBS, "MiB/s", goals),
                ("  broker CPU per GiB", wid, BROKER_CPU, "CPU s/GiB", {}),
                ("  clients' CPU per GiB", wid, CLIENT_CPU, "CPU s/GiB", {}),
                ("  broker cores busy", wid, ["result", "broker_cores"], "CPU s/s", {}),
                ("  the broker's busiest thread", wid, ["result", "broker_busiest_thread_cores"], "CPU s/s", {}),
                ("  clients' cores busy", wid, ["result", "client_cores"], "CPU s/s", {}),
                ("  a client's busiest thread", wid, ["result", "client_busiest_thread_cores"], "CPU s/s", {})]
    return out


def summarize(cfg, runs):
    table = []
    for label, wid, path, unit, goals in rows(cfg):
        row = {"label": label.strip(), "workload": wid, "unit": unit,
               "rounds": len(metric_values(runs, wid, "runnel-ssl", path))}
        for t in TARGETS:
            row[t] = median(runs, wid, t, path)
        row["ratios"] = {name: round_ratio(runs, wid, a, b, path) for name, a, b in RATIOS}
        row["per_round"] = {name: round_ratios(runs, wid, a, b, path) for name, a, b in RATIOS}
        row["goals"] = goals
        if any(row[t] is not None for t in TARGETS):
            table.append(row)
    return table


def fmt(v):
    if v is None:
        return "-"
    return "%.2f" % v if v < 10 else format(round(v, 1), ",")


def markdown(cfg, machine, table, runs):
    t = ["# TLS against plaintext, Runnel beside Kafka 4.1.1, %s" % cfg["date"], "",
         "`%s`: %d round(s); within each workload the four targets take turns, in an order rotated every round. "
         "Raw runs: [%s](%s)." % (cfg["command"], cfg["rounds"], os.path.basename(cfg["json"]),
                                  os.path.basename(cfg["json"])), "",
         "Machine: %s, %d cores, %s, kernel %s, shared: load average %.1f at the start, %.1f at the end, median "
         "%.1f across runs (the benchmark's own processes count: a load of 2 means both cores busy). The run took "
         "%s s." % (machine["cpu"], machine["cores"], machine["memory"], machine["kernel"], machine["load_start"],
                    machine["load_end"], machine["load_median"], cfg.get("run_seconds", "?")), "",
         "Runnel %s (`%s`, one event-loop thread), Apache Kafka %s (KRaft, one combined node, -Xmx1G, "
         "its shipped server.properties), librdkafka %s (confluent-kafka) as every client. Both brokers: a "
         "PLAINTEXT and an SSL listener, PKCS12 key store, `ssl.client.auth=none`; negotiated: Runnel %s, "
         "Kafka %s." % (machine["runnel_commit"], machine["runnel_binary"], machine["kafka_version"],
                        machine["librdkafka"], cfg["tls"]["runnel"], cfg["tls"]["kafka"]), "",
         "Fetch path over SSL: Runnel logs \"%s\". Kafka over SSL copies too (no sendfile through its "
         "SSLEngine); both use sendfile on PLAINTEXT." % cfg["fetch_path"], "",
         "Backlog: %d MiB of %d B values on %d partitions; produce: %d MiB per run to a fresh topic of %d "
         "partitions. MiB/s counts values; CPU is utime+stime of the broker process (/proc/<pid>/stat) and of "
         "the client processes over the run, per GiB of values." % (
             cfg["backlog_mib"], cfg["size"], PARTITIONS, cfg["produce_mib"], PARTITIONS), "",
         "Medians over the rounds. Ratios are taken within each round (both sides under the same load), then "
         "the median over rounds; per-round values in parentheses. Cores busy: CPU seconds over the run's "
         "seconds, for the whole process and for its busiest thread (/proc/<pid>/task/*/stat; a thread at 1.0 is "
         "saturated; Runnel serves every connection on one event-loop thread; the machine has %d cores for "
         "brokers and clients together)." % machine["cores"], "",
         "| | unit | %s | %s |" % (" | ".join(LABEL[x] for x in TARGETS), " | ".join(n for n, _, _ in RATIOS)),
         "|---|---|%s|" % "|".join("---:" for _ in range(len(TARGETS) + len(RATIOS)))]
    for row in table:
        cells = []
        for name, _, _ in RATIOS:
            r = row["ratios"][name]
            goal = row["goals"].get(name)
            cell = "-" if r is None else ("**%.2f**" % r if goal else "%.2f" % r)
            if r is not None and row["unit"] == "MiB/s":
                cell += " (%s)" % ", ".join("%.2f" % x for x in row["per_round"][name])
            if goal:
                cell += ", goal %s" % goal
            cells.append(cell)
        t.append("| %s | %s | %s | %s |" % (row["label"], row["unit"], " | ".join(fmt(row[x]) for x in TARGETS),
                                             " | ".join(cells)))
    failed = ["%s round %d (%s): %s" % (LABEL[r["system"]], r["round"], r["workload"], r["error"][:200])
              for r in runs if "error" in r]
    t += ["", "Failed runs: %s." % ("; ".join(failed) or "none"), "", "## Every run", "",
          "| round | workload | target | MiB/s | s | broker CPU s/GiB | clients' CPU s/GiB | load before | after |",
          "|---:|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        res = r.get("result") or {}
        t.append("| %d | %s | %s | %s | %s | %s | %s | %.2f | %.2f |" % (
            r["round"], r["workload"], LABEL[r["system"]], fmt(res.get("mib_per_s")), fmt(res.get("seconds")),
            fmt(res.get("broker_cpu_per_gib")), fmt(res.get("client_cpu_per_gib")), r["load_before"],
            r["load_after"]))
    return "\n".join(t) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes and one round, for trying it")
    ap.add_argument("--rounds", type=int, help="rounds (full: 3, quick: 1)")
    ap.add_argument("--backlog-mib", type=int, help="consume backlog per broker (full: 1024, quick: 64)")
    ap.add_argument("--produce-mib", type=int, help="written per produce run (full: 512, quick: 32)")
    ap.add_argument("--size", type=int, default=16384, help="value size in bytes (16384)")
    ap.add_argument("--clients", type=int, default=3, help="clients of the parallel workloads (3)")
    ap.add_argument("--only", nargs="*", choices=["consume", "produce"], help="run only these workloads")
    args = parse_common_args(ap)
    cfg = {
        "rounds": args.rounds or (1 if args.quick else 3),
        "backlog_mib": args.backlog_mib or (64 if args.quick else 1024),
        "produce_mib": args.produce_mib or (32 if args.quick else 512),
        "size": args.size,
        "clients": args.clients,
        "only": args.only or [],
        "command": " ".join(["bench/tls_bench.py"] + [as_typed(a) for a in sys.argv[1:]]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    }
    return bench_main("tls_bench", cfg, args, run, report)


def report(stem, cfg, machine, runs):
    table = summarize(cfg, runs)
    with open(stem + ".json", "w") as f:
        json.dump({"config": cfg, "machine": machine, "summary": table, "runs": runs}, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(markdown(cfg, machine, table, runs))


if __name__ == "__main__":
    sys.exit(main())
