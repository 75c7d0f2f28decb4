#!/usr/bin/env bash
# Kafka interoperability of Runnel's on-disk format, both ways, with Apache
# Kafka's own code (jars fetched from Maven Central by kafka_jars.sh, cached):
#  a) Runnel writes a segment; kafka.tools.DumpLogSegments reads the .log
#     (deep iteration), verifies the .index and .timeindex against it and
#     prints the same offsets, keys and payloads, with no error.
#  b) Kafka's LogSegment writes a segment (KafkaSegmentWriter.java, compiled
#     here); Runnel's Log opens it, validating every batch, and reads every
#     record Kafka wrote.
#  c) Runnel writes a producer-state snapshot; DumpLogSegments decodes it
#     (Kafka's readSnapshot checks the version and the CRC-32C) and prints
#     each producer's id, epoch, sequences, offset and timestamp.
#  d) Runnel writes a .txnindex with Log::append_aborted_txn; DumpLogSegments
#     reads it with Kafka's TransactionIndex and prints every entry.
#
#   kafka_interop_test.sh <interop_tool> <jar cache dir>
set -euo pipefail

tool="$1"
cache="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/runnel-interop-XXXXXX")"
trap 'rm -rf "$work"' EXIT

cp="$("$here/kafka_jars.sh" "$cache")"
java_run() { java -Dlog4j2.level=ERROR -cp "$cp:$work/classes" "$@" 2>"$work/java.err"; }
dump() { java_run kafka.tools.DumpLogSegments "$@"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
no_errors() {  # DumpLogSegments reports problems as text, with exit status 0
  if grep -Eiq 'exception|error|corrupt|mismatch|not match|invalid|found log offset|non-increasing' "$1"; then
    cat "$1" >&2
    fail "$2"
  fi
}

# --- a) Runnel writes, Kafka reads.
dir="$work/runnel/interop-0"
"$tool" write "$dir" >"$work/expected-a.txt"
seg="$dir/00000000000000000000"
[[ -s "$seg.index" && -s "$seg.timeindex" ]] || fail "Runnel wrote no index entries"

dump --files "$seg.log" --print-data-log --deep-iteration >"$work/dump-log.txt"
no_errors "$work/dump-log.txt" "DumpLogSegments on the .log"
n=0
while read -r offset key value; do
  line="$(grep -E "^\| offset: $offset " "$work/dump-log.txt" || true)"
  [[ -n "$line" ]] || fail "offset $offset missing from DumpLogSegments' output"
  if [[ "$value" == null ]]; then  # a null value: no payload printed
    [[ "$line" == *"valueSize: -1 "* && "$line" == *" key: $key" ]] || fail "offset $offset: want key $key, null value: $line"
  else
    [[ "$line" == *" key: $key payload: $value" ]] || fail "offset $offset: want key $key, payload $value: $line"
  fi
  n=$((n + 1))
done <"$work/expected-a.txt"
# Deep iteration prints a line per record, each starting "| offset: ".
[[ "$(grep -cE '^\| offset: ' "$work/dump-log.txt" || true)" == "$n" ]] ||
  fail "DumpLogSegments printed $(grep -cE '^\| offset: ' "$work/dump-log.txt") records, Runnel wrote $n"

for ext in index timeindex; do
  dump --files "$seg.$ext" --verify-index-only >"$work/verify-$ext.txt"
  no_errors "$work/verify-$ext.txt" "--verify-index-only on the .$ext"
  dump --files "$seg.$ext" --index-sanity-check >"$work/sanity-$ext.txt"
  no_errors "$work/sanity-$ext.txt" "--index-sanity-check on the .$ext"
  grep -q "passed sanity check" "$work/sanity-$ext.txt" || { cat "$work/sanity-$ext.txt" >&2; fail ".$ext sanity check"; }
  dump --files "$seg.$ext" >"$work/dump-$ext.txt"
  no_errors "$work/dump-$ext.txt" "DumpLogSegments on the .$ext"
  grep -q "offset: " "$work/dump-$ext.txt" || fail "no entries printed for the .$ext"
done
echo "a) Kafka's DumpLogSegments read $n records and both indexes Runnel wrote"

# --- c) Runnel's producer snapshot, decoded by Kafka.
"$tool" snapshot "$work/runnel/snap-0" >"$work/expected-c.txt"
snapshot="$(head -n1 "$work/expected-c.txt")"
dump --files "$snapshot" >"$work/dump-snapshot.txt"
no_errors "$work/dump-snapshot.txt" "DumpLogSegments on the .snapshot"
producers=0
while read -r pid epoch first last offset ts; do
  line="$(grep -E "producerId: $pid producerEpoch: $epoch " "$work/dump-snapshot.txt" || true)"
  [[ -n "$line" ]] || { cat "$work/dump-snapshot.txt" >&2; fail "producer $pid (epoch $epoch) missing from the snapshot dump"; }
  [[ "$line" == *"firstSequence: $first lastSequence: $last lastOffset: $offset "* && "$line" == *"timestamp: $ts"* ]] ||
    fail "producer $pid: want sequences $first..$last, last offset $offset, timestamp $ts: $line"
  producers=$((producers + 1))
done < <(tail -n +2 "$work/expected-c.txt")
[[ "$(grep -c 'producerId: ' "$work/dump-snapshot.txt")" == "$producers" ]] || fail "DumpLogSegments printed other producers"
echo "c) Kafka's DumpLogSegments decoded the $producers producers of Runnel's snapshot"

# --- d) Runnel's aborted-transaction index, read by Kafka.
"$tool" txnindex "$work/runnel/txn-0" >"$work/expected-d.txt"
txnindex="$(head -n1 "$work/expected-d.txt")"
dump --files "$txnindex" >"$work/dump-txnindex.txt"
no_errors "$work/dump-txnindex.txt" "DumpLogSegments on the .txnindex"
aborted=0
while read -r pid first last lso; do
  grep -qxF "version: 0 producerId: $pid firstOffset: $first lastOffset: $last lastStableOffset: $lso" \
    "$work/dump-txnindex.txt" || { cat "$work/dump-txnindex.txt" >&2; fail "aborted txn of producer $pid missing"; }
  aborted=$((aborted + 1))
done < <(tail -n +2 "$work/expected-d.txt")
[[ "$(grep -c '^version: ' "$work/dump-txnindex.txt")" == "$aborted" ]] || fail "DumpLogSegments printed other entries"
echo "d) Kafka's DumpLogSegments read the $aborted aborted transactions of Runnel's .txnindex"

# --- b) Kafka writes, Runnel reads.
mkdir -p "$work/classes"
javac -nowarn -cp "$cp" -d "$work/classes" "$here/KafkaSegmentWriter.java"
java_run KafkaSegmentWriter "$work/kafka/t-0" >"$work/expected-b.txt"
"$tool" read "$work/kafka/t-0" >"$work/read-b.txt"
diff -u "$work/expected-b.txt" "$work/read-b.txt" || fail "Runnel read something other than what Kafka wrote"
echo "b) Runnel read the $(wc -l <"$work/expected-b.txt") records Kafka's LogSegment wrote"
