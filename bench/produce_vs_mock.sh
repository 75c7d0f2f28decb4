#!/usr/bin/env bash
# Runnel (release build) against librdkafka's in-memory mock cluster, same
# producer workload, alternating mock, Runnel, mock, Runnel so drift in the
# machine hits both (bench/run_suite.py is the full suite, with Kafka).
# 100-byte records to 6 partitions, linger.ms=5, with
# acks=1 and acks=all. Prints a markdown table; raw JSON lines go to
# bench/results/produce_vs_mock-<date>.jsonl. Also reports Runnel's idle RSS.
#
#   bench/produce_vs_mock.sh [records]     (default 2000000)
set -euo pipefail
cd "$(dirname "$0")/.."
records=${1:-2000000}
scripts/setup
cmake --preset release >/dev/null
cmake --build --preset release --target runnel loadgen >/dev/null
bin=build/release
mkdir -p bench/results
out=bench/results/produce_vs_mock-$(date -u +%Y-%m-%d).jsonl
: > "$out"

start_runnel() {  # sets pid, port, dir
  dir=$(mktemp -d)
  "$bin/runnel" serve config/server.properties \
    --override listeners=PLAINTEXT://127.0.0.1:0 --override advertised.listeners=PLAINTEXT://127.0.0.1:0 \
    --override log.dirs="$dir/data" --override num.partitions=6 "$@" 2>"$dir/runnel.log" &
  pid=$!
  for _ in $(seq 1 100); do
    port=$(grep -o 'listening on PLAINTEXT://127.0.0.1:[0-9]*' "$dir/runnel.log" | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && return 0
    sleep 0.05
  done
  echo "runnel did not start" >&2; cat "$dir/runnel.log" >&2; exit 1
}
stop_runnel() { kill "$pid"; wait "$pid" || true; rm -rf "$dir"; }

start_runnel
sleep 1
idle_rss_kb=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
stop_runnel

for acks in 1 all; do
  for round in 1 2; do
    "$bin/bench/loadgen" --mock --records "$records" --acks "$acks" | tee -a "$out"
    start_runnel
    "$bin/bench/loadgen" --bootstrap 127.0.0.1:$port --create-topic --records "$records" --acks "$acks" | sed 's/"broker"/"runnel"/' | tee -a "$out"
    stop_runnel
  done
done

python3 - "$out" "$idle_rss_kb" <<'PY'
import json, sys, statistics
rows = [dict(json.loads(l), **json.loads(l)["produce"]) for l in open(sys.argv[1])]  # loadgen nests the numbers
print(f"\n| acks | mock records/s | Runnel records/s | Runnel / mock | Runnel p99 ms | mock p99 ms |")
print("|---|---:|---:|---:|---:|---:|")
for acks in ("1", "all"):
    m = [r for r in rows if r["target"] == "mock" and r["acks"] == acks]
    r = [x for x in rows if x["target"] == "runnel" and x["acks"] == acks]
    mr = statistics.median(x["records_per_s"] for x in m)
    rr = statistics.median(x["records_per_s"] for x in r)
    print(f"| {acks} | {mr:,.0f} | {rr:,.0f} | {rr/mr:.2f} | {statistics.median(x['p99_ms'] for x in r):.1f} | {statistics.median(x['p99_ms'] for x in m):.1f} |")
print(f"\nRunnel idle RSS: {int(sys.argv[2])/1024:.1f} MiB")
PY
