// Helpers for the storage tests: temp dirs, a settable clock, and valid
// RecordBatch v2 batches with real (uncompressed) records.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"
#include "protocol/records/batch_format.h"
#include "storage/io.h"
#include "storage/log.h"
#include "storage/log_manager.h"

namespace runnel::storage::testing {

namespace records = protocol::records;
using protocol::Bytes;

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "runnel-storage-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// A clock the test moves by hand; atomic, as a log's background work reads
// it from other threads.
struct FakeClock final : runnel::Clock {
  std::shared_ptr<std::atomic<int64_t>> ms = std::make_shared<std::atomic<int64_t>>(1'700'000'000'000);
  int64_t wall_ms() const override { return ms->load(); }
  int64_t steady_ms() const override { return ms->load(); }
  const runnel::Clock* clock() const { return this; }
  void advance(int64_t d) { *ms += d; }
  int64_t now() const { return ms->load(); }
};

// Segments of 2 KiB with an index entry every 256 bytes: a few batches
// roll a segment and index entries come early.
inline LogConfig small_segment_config() {
  LogConfig c;
  c.segment_bytes = 2048;
  c.index_interval_bytes = 256;
  return c;
}

inline LogOptions options_with(const FakeClock& clock) {
  LogOptions o;
  o.clock = clock.clock();
  return o;
}

struct BatchSpec {
  int records = 1;
  int64_t first_timestamp = 1'700'000'000'000;
  int64_t timestamp_step = 0;  // record i: first_timestamp + i * step
  size_t value_size = 16;      // each value starts with the 8-byte tag
  uint64_t tag = 0;            // recognises the batch when read back
};

inline Bytes make_batch(const BatchSpec& spec) {
  Bytes body;
  int64_t max_ts = spec.first_timestamp;
  for (int i = 0; i < spec.records; ++i) {
    int64_t ts = spec.first_timestamp + i * spec.timestamp_step;
    max_ts = std::max(max_ts, ts);
    Bytes rec;
    protocol::Writer w(rec);
    w.i8(0);  // attributes
    w.varlong(ts - spec.first_timestamp);
    w.varint(i);   // offset delta
    w.varint(-1);  // null key
    Bytes value(std::max<size_t>(spec.value_size, 8), static_cast<uint8_t>('a' + i % 26));
    for (int b = 0; b < 8; ++b) value[b] = static_cast<uint8_t>(spec.tag >> (56 - 8 * b));
    w.varint(static_cast<int32_t>(value.size()));
    w.raw(value.data(), value.size());
    w.varint(0);  // headers
    protocol::Writer out(body);
    out.varint(static_cast<int32_t>(rec.size()));
    out.raw(rec.data(), rec.size());
  }
  Bytes batch(records::kHeaderSize + body.size());
  std::copy(body.begin(), body.end(), batch.begin() + records::kHeaderSize);
  records::BatchHeader h;
  h.base_offset = 0;
  h.batch_length = static_cast<int32_t>(batch.size() - records::kLogOverhead);
  h.partition_leader_epoch = -1;
  h.last_offset_delta = spec.records - 1;
  h.base_timestamp = spec.first_timestamp;
  h.max_timestamp = max_ts;
  h.records_count = spec.records;
  records::write_batch_header(h, batch.data());
  h.crc = records::compute_batch_crc(batch);
  records::write_batch_header(h, batch.data());
  return batch;
}

// A batch of `records` records carrying `tag`, `value_size` bytes each.
inline Bytes batch_of(int records, uint64_t tag, size_t value_size = 16, int64_t ts = 1'700'000'000'000) {
  BatchSpec s;
  s.records = records;
  s.tag = tag;
  s.value_size = value_size;
  s.first_timestamp = ts;
  return make_batch(s);
}

struct ReadBatch {
  records::BatchHeader header;
  uint64_t tag = 0;
  bool crc_ok = false;
};

// The batches in `bytes`, with the tag of each first record.
inline std::vector<ReadBatch> parse_batches(const Bytes& bytes) {
  std::vector<ReadBatch> out;
  size_t at = 0;
  while (at + records::kHeaderSize <= bytes.size()) {
    auto h = *records::read_batch_header(protocol::ByteView(bytes.data() + at, bytes.size() - at));
    if (at + h.total_size() > bytes.size()) break;
    protocol::ByteView batch(bytes.data() + at, h.total_size());
    ReadBatch rb{h, 0, records::compute_batch_crc(batch) == h.crc};
    protocol::Reader r(batch.subspan(records::kHeaderSize));
    r.varint();
    r.i8();
    r.varlong();
    r.varint();
    r.varint();  // key length (-1)
    int32_t vlen = r.varint();
    if (r.ok() && vlen >= 8) {
      auto v = r.view(8);
      for (int b = 0; b < 8 && v.size() == 8; ++b) rb.tag = (rb.tag << 8) | v[b];
    }
    out.push_back(rb);
    at += h.total_size();
  }
  return out;
}

inline Bytes read_region(const protocol::FileRegion& r) {
  Bytes out(static_cast<size_t>(r.length));
  if (r.length > 0) {
    auto n = pread_full(r.fd, out.data(), out.size(), r.offset);
    out.resize(n ? *n : 0);
  }
  return out;
}

// Every batch from the log start offset to the end, fetched `max_bytes` at a time.
inline std::vector<ReadBatch> read_all(Log& log, int64_t max_bytes = 1 << 20) {
  std::vector<ReadBatch> out;
  int64_t offset = log.log_start_offset();
  while (offset < log.log_end_offset()) {
    auto r = log.read(offset, max_bytes);
    if (!r || r->records.length == 0) break;
    auto batches = parse_batches(read_region(r->records));
    if (batches.empty()) break;
    for (auto& b : batches) out.push_back(b);
    offset = batches.back().header.last_offset() + 1;
  }
  return out;
}

// Appends as a leader with no followers: the high watermark follows.
inline Result<AppendInfo> append(Log& log, Bytes batch, int32_t epoch = 0) {
  auto info = log.append(std::span<uint8_t>(batch.data(), batch.size()), epoch);
  if (info) log.maybe_increment_high_watermark(log.log_end_offset());
  return info;
}

inline Bytes file_bytes(const fs::path& p) {
  auto s = read_whole_file(p);
  return s ? Bytes(s->begin(), s->end()) : Bytes();
}

// Overwrites `p` (no fsync: tests do not survive power loss).
inline void write_bytes(const fs::path& p, const Bytes& b) {
  auto f = FileHandle::open(p, O_WRONLY | O_CREAT | O_TRUNC);
  if (f) (void)pwrite_all(f->fd(), b.data(), b.size(), 0);
}

// A log manager over `dir` for node 1 of a fixed cluster id, as the
// broker-level tests open one.
inline std::unique_ptr<LogManager> open_log_manager(const fs::path& dir, bool load_on_demand = false) {
  LogManagerOptions o;
  o.log_dirs = {dir};
  o.cluster_id = "MkU3OEVBNTcwNTJENDM2Qk";
  o.node_id = 1;
  o.load_on_demand = load_on_demand;
  auto logs = LogManager::open(std::move(o));
  if (!logs) throw std::runtime_error("cannot open the log manager: " + logs.error().message());
  return std::move(*logs);
}

}  // namespace runnel::storage::testing
