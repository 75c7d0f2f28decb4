// The Runnel side of the Kafka interoperability test (kafka_interop_test.sh).
//
//   interop_tool write <partition dir>   writes a segment with Runnel's Log
//   interop_tool read <partition dir>    opens a log (recovering it: every batch
//                                        is validated) and reads every record
//   interop_tool snapshot <partition dir>  writes a producer-state snapshot
//   interop_tool txnindex <partition dir>  writes a segment with aborted
//                                        transactions in its .txnindex
//
// write and read print one record a line, "<offset> <key> <value>" ("null"
// for a null value), so the script can compare with what Kafka's tools print
// or wrote; snapshot prints its file's path, then one producer a line,
// "<producer id> <epoch> <first sequence> <last sequence> <last offset>
// <timestamp>"; txnindex prints the .txnindex's path, then one entry a
// line, "<producer id> <first offset> <last offset> <last stable offset>".
#include <climits>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_reader.h"
#include "storage/log.h"
#include "storage/producer_snapshot.h"

using namespace runnel;
namespace rec = protocol::records;

namespace {

protocol::ByteView view(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(protocol::ByteView v) { return {reinterpret_cast<const char*>(v.data()), v.size()}; }

int fail(const char* what, std::error_code ec) {
  std::fprintf(stderr, "interop_tool: %s: %s\n", what, ec.message().c_str());
  return 1;
}

storage::LogConfig config() {
  storage::LogConfig c;
  c.index_interval_bytes = 256;
  return c;
}

int write(const std::string& dir) {
  auto log = storage::Log::open(dir, config(), {});
  if (!log) return fail("open", log.error());
  const int64_t ts = 1700000000000;
  int64_t offset = 0;
  for (int b = 0; b < 12; ++b) {
    int n = 1 + b % 4;
    std::vector<std::string> keys, values, header_values;
    for (int r = 0; r < n; ++r) {
      keys.push_back("key-" + std::to_string(b) + "-" + std::to_string(r));
      values.push_back("value-" + std::to_string(b) + "-" + std::to_string(r) + "-" + std::string(40 * r, 'x'));
      header_values.push_back("hv" + std::to_string(b));
    }
    std::vector<std::string> header_keys;
    for (int r = 0; r < n; ++r) header_keys.push_back("h" + std::to_string(r));
    std::vector<rec::Record> records;
    for (int r = 0; r < n; ++r) {
      rec::Record record;
      record.offset_delta = r;
      record.timestamp_delta = r;
      record.key = view(keys[r]);
      bool tombstone = b == 5 && r == 0;
      if (!tombstone) record.value = view(values[r]);
      record.headers.push_back({header_keys[r], view(header_values[r])});
      records.push_back(record);
      std::printf("%lld %s %s\n", static_cast<long long>(offset + r), keys[r].c_str(),
                  tombstone ? "null" : values[r].c_str());
    }
    rec::BatchSpec spec;
    spec.compression = b % 2 == 0 ? rec::Compression::gzip : rec::Compression::none;
    spec.base_timestamp = ts + b * 1000;
    protocol::Bytes batch = rec::build_batch(spec, records);
    auto info = (*log)->append(std::span<uint8_t>(batch.data(), batch.size()), 0);
    if (!info) return fail("append", info.error());
    offset = info->last_offset + 1;
  }
  if (auto ec = (*log)->close()) return fail("close", ec);
  return 0;
}

int read(const std::string& dir) {
  storage::LogOptions options;
  options.clean_shutdown = false;  // validate every batch, as after a crash
  auto log = storage::Log::open(dir, config(), options);
  if (!log) return fail("open", log.error());
  int64_t offset = (*log)->log_start_offset();
  while (offset < (*log)->log_end_offset()) {
    auto r = (*log)->read(offset, 1 << 20);
    if (!r) return fail("read", r.error());
    const auto& region = r->records;
    if (region.length == 0) break;
    protocol::Bytes bytes(static_cast<size_t>(region.length));
    auto got = storage::pread_full(region.fd, bytes.data(), bytes.size(), region.offset);
    if (!got || *got != bytes.size()) return fail("pread", got ? std::make_error_code(std::errc::io_error) : got.error());
    rec::BatchIterator it(bytes);
    while (auto b = it.next()) {
      if (rec::compute_batch_crc(b->bytes) != b->header.crc) return fail("crc", std::make_error_code(std::errc::io_error));
      rec::BatchRecordReader reader(b->bytes, 64 << 20);
      rec::Record record;
      while (reader.next(record))
        std::printf("%lld %s %s\n", static_cast<long long>(b->header.base_offset + record.offset_delta),
                    record.key ? str(*record.key).c_str() : "null", record.value ? str(*record.value).c_str() : "null");
      if (!reader.status().ok()) {
        std::fprintf(stderr, "interop_tool: batch at %lld: %s\n", static_cast<long long>(b->header.base_offset),
                     reader.status().message.c_str());
        return 1;
      }
      offset = b->header.last_offset() + 1;
    }
  }
  std::fprintf(stderr, "interop_tool: log end offset %lld\n", static_cast<long long>((*log)->log_end_offset()));
  return 0;
}

int snapshot(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail("mkdir", ec);
  std::vector<storage::ProducerSnapshotEntry> entries(3);
  // A plain producer, one whose last batch wrapped its sequence past
  // INT32_MAX, and one with a bumped epoch.
  entries[0] = {1000, 0, 41, 120, 4, 1700000000100, -1, -1};
  entries[1] = {2000, 3, 2, 130, 5, 1700000000200, -1, -1};
  entries[2] = {4611686018427387904LL, 7, 0, 131, 0, 1700000000300, -1, -1};
  const int64_t offset = 132;
  if (auto wec = storage::write_producer_snapshot(dir, offset, entries)) return fail("write snapshot", wec);
  std::printf("%s\n", storage::producer_snapshot_path(dir, offset).c_str());
  for (const auto& e : entries) {
    int32_t first = e.last_sequence < e.offset_delta ? INT32_MAX - (e.offset_delta - e.last_sequence) + 1
                                                     : e.last_sequence - e.offset_delta;
    std::printf("%lld %d %d %d %lld %lld\n", static_cast<long long>(e.producer_id), e.epoch, first, e.last_sequence,
                static_cast<long long>(e.last_offset), static_cast<long long>(e.timestamp));
  }
  return 0;
}

int txnindex(const std::string& dir) {
  auto log = storage::Log::open(dir, config(), {});
  if (!log) return fail("open", log.error());
  // Each entry's marker is the batch just appended; the last producer id
  // needs all 64 bits.
  const std::vector<std::pair<int64_t, int64_t>> aborts = {{1000, 0}, {2000, 2}, {4611686018427387904LL, 5}};
  std::vector<storage::AbortedTxn> entries;
  for (const auto& [producer_id, first_offset] : aborts) {
    for (int b = 0; b < 3; ++b) {
      std::string value = "v" + std::to_string(b);
      rec::Record record;
      record.value = view(value);
      std::vector<rec::Record> records{record};
      rec::BatchSpec spec;
      spec.base_timestamp = 1700000000000;
      protocol::Bytes batch = rec::build_batch(spec, records);
      auto info = (*log)->append(std::span<uint8_t>(batch.data(), batch.size()), 0);
      if (!info) return fail("append", info.error());
    }
    int64_t marker = (*log)->log_end_offset() - 1;
    entries.push_back({producer_id, first_offset, marker, first_offset});
    if (auto ec = (*log)->append_aborted_txn(entries.back())) return fail("append_aborted_txn", ec);
  }
  if (auto ec = (*log)->close()) return fail("close", ec);
  std::printf("%s\n", storage::Segment::txn_index_path(dir, 0).c_str());
  for (const auto& e : entries)
    std::printf("%lld %lld %lld %lld\n", static_cast<long long>(e.producer_id), static_cast<long long>(e.first_offset),
                static_cast<long long>(e.last_offset), static_cast<long long>(e.last_stable_offset));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: interop_tool write|read|snapshot|txnindex <partition dir>\n");
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "write") return write(argv[2]);
  if (mode == "read") return read(argv[2]);
  if (mode == "snapshot") return snapshot(argv[2]);
  if (mode == "txnindex") return txnindex(argv[2]);
  return 2;
}
