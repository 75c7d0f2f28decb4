#!/usr/bin/env bash
# Regenerates compat-tests/MATRIX.md: runs every client's driver against
# Apache Kafka 4.1.1 and against Runnel (release build), each broker fresh per
# client, then again against three brokers of each (--cluster), then with
# the security columns (--security: SSL, mTLS, SASL listeners), then writes
# the tables. About 20-30 minutes on 2 cores for each of the first two modes,
# most of it JVM and Go start-up and Kafka's own start; 5 for the third.
#
#   compat-tests/matrix/make_matrix.sh [client,client,...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"
scripts/setup
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target runnel
clients="${1:-}"
py=/usr/bin/python3
status=0
$py "$here/run_matrix.py" --broker kafka --clients "$clients" --out "$here/results/kafka.json" || status=1
$py "$here/run_matrix.py" --broker runnel --runnel build/release/runnel --clients "$clients" \
  --out "$here/results/runnel.json" || status=1
$py "$here/run_matrix.py" --broker kafka --cluster --clients "$clients" --out "$here/results/kafka-cluster.json" || status=1
$py "$here/run_matrix.py" --broker runnel --cluster --runnel build/release/runnel --clients "$clients" \
  --out "$here/results/runnel-cluster.json" || status=1
$py "$here/run_matrix.py" --broker kafka --security --clients "$clients" --out "$here/results/kafka-security.json" || status=1
$py "$here/run_matrix.py" --broker runnel --security --runnel build/release/runnel --clients "$clients" \
  --out "$here/results/runnel-security.json" || status=1
$py "$here/make_matrix.py"
exit $status
