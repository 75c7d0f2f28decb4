// Producer-state snapshots: <partition dir>/<20-digit offset>.snapshot, the
// idempotent producers' state as it stood at that offset (Kafka's
// ProducerStateManager writeSnapshot/readSnapshot, file version 1), so a
// restart replays only the log after the latest snapshot.
//
// The file, all big-endian:
//   int16  version            1
//   uint32 crc                CRC-32C of every byte after this field
//   int32  entry count        then that many 46-byte entries:
//     int64 producer_id
//     int16 epoch
//     int32 last_sequence     of the producer's last batch (-1: none)
//     int64 last_offset       of the producer's last batch (-1: none)
//     int32 offset_delta      last_offset - first offset of that batch
//     int64 timestamp         that batch's max timestamp (expiry clock)
//     int32 coordinator_epoch -1 unless transactional
//     int64 current_txn_first_offset  -1 unless a transaction is open
//
// A file whose version is not 1, whose CRC does not match, or whose length
// disagrees with its count is corrupt: the loader deletes it and tries the
// next older one, as Kafka does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "protocol/codec/types.h"
#include "storage/errors.h"

namespace runnel::storage {

namespace fs = std::filesystem;

inline constexpr const char* kProducerSnapshotSuffix = ".snapshot";
inline constexpr int16_t kProducerSnapshotVersion = 1;

struct ProducerSnapshotEntry {
  int64_t producer_id = -1;
  int16_t epoch = -1;
  int32_t last_sequence = -1;
  int64_t last_offset = -1;
  int32_t offset_delta = 0;
  int64_t timestamp = -1;
  int32_t coordinator_epoch = -1;
  int64_t current_txn_first_offset = -1;

  bool operator==(const ProducerSnapshotEntry&) const = default;
};

// The file's bytes, entries in the order given.
std::string encode_producer_snapshot(std::span<const ProducerSnapshotEntry> entries);
// corrupt_checkpoint for a file that is not a valid version-1 snapshot.
Result<std::vector<ProducerSnapshotEntry>> decode_producer_snapshot(protocol::ByteView bytes);

fs::path producer_snapshot_path(const fs::path& dir, int64_t offset);
// Written atomically and fsynced (storage/io.h write_file_atomically).
std::error_code write_producer_snapshot(const fs::path& dir, int64_t offset,
                                        std::span<const ProducerSnapshotEntry> entries);
Result<std::vector<ProducerSnapshotEntry>> read_producer_snapshot(const fs::path& dir, int64_t offset);

// The offsets of the snapshot files in `dir`, ascending.
std::vector<int64_t> list_producer_snapshots(const fs::path& dir);
std::error_code delete_producer_snapshot(const fs::path& dir, int64_t offset);
// Deletes the snapshots below `offset` (Kafka's deleteSnapshotsBefore).
std::error_code delete_producer_snapshots_before(const fs::path& dir, int64_t offset);
// Deletes the snapshots above `offset` (a truncated log cannot back them).
std::error_code delete_producer_snapshots_after(const fs::path& dir, int64_t offset);
// Kafka's removeStraySnapshots, run when a log loads: a snapshot whose
// offset is no segment's base offset goes, except the newest such one when
// it lies above every segment base (the one a clean shutdown wrote at the
// log end offset).
std::error_code remove_stray_producer_snapshots(const fs::path& dir, std::span<const int64_t> segment_bases);

}  // namespace runnel::storage
