#!/usr/bin/python3
"""What /metrics costs the produce path (issue 17): acks=1 throughput of a
broker whose admin listener is scraped every second, against one with no
admin listener at all, side by side in one run.

Two release `runnel serve` processes stay up for the whole run, each on a
fresh dir: "scraped" with runnel.admin.listeners=http://127.0.0.1:0 and a
thread reading its /metrics once a second (each scrape is checked to parse
as Prometheus text and to count the records in), and "unscraped" without
the listener. The counters themselves are always on (they cannot be turned
off), so the ratio is what scraping and rendering add on top of counting;
what counting costs is inside both numbers. In each of --rounds rounds the
two take turns, in an order swapped every round, each producing --records
100 B records, acks=1, to a fresh topic of 6 partitions with bench/loadgen
(librdkafka). Reported: records/s of each, and scraped/unscraped within
each round, then the median.

  /usr/bin/python3 bench/metrics_bench.py --runnel build/release/runnel   # --rounds N --records N --out DIR
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
import runnel_harness  # noqa: E402
from run_suite import log, run_loadgen  # noqa: E402

LIMIT = 600  # seconds any one loadgen may take


class Scraper(threading.Thread):
    """GET /metrics once a second until stopped; counts the scrapes and the failures."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.scrapes, self.failures, self.bytes = port, 0, [], 0
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(1.0):
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.port, timeout=5) as r:
                    body = r.read().decode()
                assert "kafka_server_brokertopicmetrics_messagesin_total " in body, "no MessagesIn in /metrics"
                self.scrapes += 1
                self.bytes = len(body)
            except Exception as e:  # reported, and the run counts as failed
                self.failures.append("%s: %s" % (type(e).__name__, e))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runnel", default=os.path.join(REPO, "build", "release", "runnel"))
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--records", type=int, default=2000000)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    loadgen = os.path.join(args.build, "bench", "loadgen")
    brokers = {
        "scraped": runnel_harness.Runnel(args.runnel, {"runnel.admin.listeners": "http://127.0.0.1:0"},
                                         prefix="runnel-metrics-bench-"),
        "unscraped": runnel_harness.Runnel(args.runnel, {}, prefix="runnel-metrics-bench-"),
    }
    runs, scraper = [], None
    load_start = os.getloadavg()[0]
    try:
        for b in brokers.values():
            b.die_with_parent = True
            b.start()
        scraper = Scraper(brokers["scraped"].admin_port())
        scraper.start()
        for rnd in range(1, args.rounds + 1):
            order = ["scraped", "unscraped"] if rnd % 2 else ["unscraped", "scraped"]
            for name in order:
                extra = ["--records", str(args.records), "--size", "100", "--partitions", "6", "--acks", "1",
                         "--topic", "metrics-%s-%d" % (name, rnd), "--timeout", str(LIMIT)]
                res = run_loadgen(loadgen, brokers[name], extra, LIMIT + 60)
                if not res.get("ok"):
                    raise RuntimeError("%s round %d: %s" % (name, rnd, res.get("stderr", "")[-500:]))
                rps = res["produce"]["records_per_s"]
                runs.append({"round": rnd, "system": name, "records_per_s": rps, "mb_per_s": res["produce"]["mb_per_s"]})
                log("round %d %-9s %10.0f records/s" % (rnd, name, rps))
    finally:
        if scraper:
            scraper.done.set()
            scraper.join(10)
        for b in brokers.values():
            b.close()
    if scraper.failures:
        log("scrapes failed: %s" % scraper.failures[:5])
        return 1
    by = {(r["round"], r["system"]): r["records_per_s"] for r in runs}
    ratios = [by[(k, "scraped")] / by[(k, "unscraped")] for k in range(1, args.rounds + 1)]
    med = {s: statistics.median(r["records_per_s"] for r in runs if r["system"] == s) for s in brokers}
    date = datetime.date.today().isoformat()
    stem = os.path.join(args.out, "metrics_bench-%s" % date)
    summary = {"records": args.records, "rounds": args.rounds, "runs": runs, "ratios": ratios,
               "ratio_median": statistics.median(ratios), "median_records_per_s": med, "scrapes": scraper.scrapes,
               "metrics_bytes": scraper.bytes, "load_start": load_start, "load_end": os.getloadavg()[0]}
    with open(stem + ".json", "w") as f:
        json.dump(summary, f, indent=1)
    md = ["# /metrics scraped every second against no admin listener, %s" % date, "",
          "`/usr/bin/python3 bench/metrics_bench.py --rounds %d --records %d`: acks=1, 100 B records, 6 partitions, "
          "librdkafka's bench/loadgen; the two brokers take turns each round. Load average %.1f at the start, "
          "%.1f at the end (the machine is shared). %d scrapes of %d bytes each, all parsed." % (
              args.rounds, args.records, load_start, os.getloadavg()[0], scraper.scrapes, scraper.bytes), "",
          "| broker | median records/s |", "|---|---|",
          "| scraped | %.0f |" % med["scraped"], "| unscraped | %.0f |" % med["unscraped"], "",
          "Scraped / unscraped, median of the rounds' ratios: **%.3f** (per round: %s)." % (
              statistics.median(ratios), ", ".join("%.3f" % r for r in ratios)), ""]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
