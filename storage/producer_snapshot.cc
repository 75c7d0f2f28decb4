#include "storage/producer_snapshot.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"
#include "protocol/records/batch_format.h"
#include "storage/io.h"

namespace runnel::storage {

namespace {

constexpr size_t kCrcOffset = 2;
constexpr size_t kEntriesOffset = kCrcOffset + 4;  // the CRC covers everything from here
constexpr size_t kEntrySize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;

std::optional<int64_t> snapshot_offset(const std::string& name) {
  std::string_view s(name);
  std::string_view suffix(kProducerSnapshotSuffix);
  if (s.size() != 20 + suffix.size() || s.substr(20) != suffix) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + 20, v);
  if (ec != std::errc() || p != s.data() + 20 || v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::string encode_producer_snapshot(std::span<const ProducerSnapshotEntry> entries) {
  protocol::Bytes out;
  protocol::Writer w(out);
  w.i16(kProducerSnapshotVersion);
  w.u32(0);  // the CRC, filled in below
  w.i32(static_cast<int32_t>(entries.size()));
  for (const auto& e : entries) {
    w.i64(e.producer_id);
    w.i16(e.epoch);
    w.i32(e.last_sequence);
    w.i64(e.last_offset);
    w.i32(e.offset_delta);
    w.i64(e.timestamp);
    w.i32(e.coordinator_epoch);
    w.i64(e.current_txn_first_offset);
  }
  uint32_t crc = protocol::records::crc32c(protocol::ByteView(out).subspan(kEntriesOffset));
  for (int i = 0; i < 4; ++i) out[kCrcOffset + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  return std::string(out.begin(), out.end());
}

Result<std::vector<ProducerSnapshotEntry>> decode_producer_snapshot(protocol::ByteView bytes) {
  if (bytes.size() < kEntriesOffset + 4) return StorageErrc::corrupt_checkpoint;
  protocol::Reader r(bytes);
  int16_t version = r.i16();
  uint32_t crc = r.u32();
  int32_t count = r.i32();
  if (version != kProducerSnapshotVersion) return StorageErrc::corrupt_checkpoint;
  if (crc != protocol::records::crc32c(bytes.subspan(kEntriesOffset))) return StorageErrc::corrupt_checkpoint;
  if (count < 0 || bytes.size() - kEntriesOffset - 4 != static_cast<size_t>(count) * kEntrySize)
    return StorageErrc::corrupt_checkpoint;
  std::vector<ProducerSnapshotEntry> out(static_cast<size_t>(count));
  for (auto& e : out) {
    e.producer_id = r.i64();
    e.epoch = r.i16();
    e.last_sequence = r.i32();
    e.last_offset = r.i64();
    e.offset_delta = r.i32();
    e.timestamp = r.i64();
    e.coordinator_epoch = r.i32();
    e.current_txn_first_offset = r.i64();
  }
  if (!r.ok()) return StorageErrc::corrupt_checkpoint;
  return out;
}

fs::path producer_snapshot_path(const fs::path& dir, int64_t offset) {
  char name[32];
  std::snprintf(name, sizeof name, "%020lld%s", static_cast<long long>(offset), kProducerSnapshotSuffix);
  return dir / name;
}

std::error_code write_producer_snapshot(const fs::path& dir, int64_t offset,
                                        std::span<const ProducerSnapshotEntry> entries) {
  return write_file_atomically(producer_snapshot_path(dir, offset), encode_producer_snapshot(entries));
}

Result<std::vector<ProducerSnapshotEntry>> read_producer_snapshot(const fs::path& dir, int64_t offset) {
  auto text = read_whole_file(producer_snapshot_path(dir, offset));
  if (!text) return text.error();
  return decode_producer_snapshot(
      protocol::ByteView(reinterpret_cast<const uint8_t*>(text->data()), text->size()));
}

std::vector<int64_t> list_producer_snapshots(const fs::path& dir) {
  std::vector<int64_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    if (auto o = snapshot_offset(entry.path().filename().string())) out.push_back(*o);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::error_code delete_producer_snapshot(const fs::path& dir, int64_t offset) {
  return remove_if_exists(producer_snapshot_path(dir, offset));
}

std::error_code delete_producer_snapshots_before(const fs::path& dir, int64_t offset) {
  for (int64_t o : list_producer_snapshots(dir)) {
    if (o >= offset) break;
    if (auto ec = delete_producer_snapshot(dir, o)) return ec;
  }
  return {};
}

std::error_code delete_producer_snapshots_after(const fs::path& dir, int64_t offset) {
  for (int64_t o : list_producer_snapshots(dir))
    if (o > offset)
      if (auto ec = delete_producer_snapshot(dir, o)) return ec;
  return {};
}

std::error_code remove_stray_producer_snapshots(const fs::path& dir, std::span<const int64_t> segment_bases) {
  auto is_base = [&](int64_t o) { return std::find(segment_bases.begin(), segment_bases.end(), o) != segment_bases.end(); };
  std::optional<int64_t> latest_stray;
  for (int64_t o : list_producer_snapshots(dir)) {
    if (is_base(o)) continue;
    if (latest_stray)
      if (auto ec = delete_producer_snapshot(dir, *latest_stray)) return ec;
    latest_stray = o;
  }
  if (latest_stray && !segment_bases.empty() &&
      *latest_stray < *std::max_element(segment_bases.begin(), segment_bases.end()))
    return delete_producer_snapshot(dir, *latest_stray);
  return {};
}

}  // namespace runnel::storage
