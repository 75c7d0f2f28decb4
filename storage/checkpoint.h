// Kafka's checkpoint files: small text files rewritten whole, atomically
// (write <name>.tmp, fsync, rename over <name>, fsync the directory).
//
//   line 1   version            "0"
//   line 2   entry count        decimal
//   line 3+  one entry a line   fields separated by one space
//
//   <log dir>/recovery-point-offset-checkpoint   "<topic> <partition> <offset>"
//   <log dir>/log-start-offset-checkpoint        "<topic> <partition> <offset>"
//   <log dir>/cleaner-offset-checkpoint          "<topic> <partition> <offset>"
//   <partition dir>/leader-epoch-checkpoint      "<epoch> <start offset>"
//
// Every line ends in '\n'. A missing or empty file reads as no entries, as
// in Kafka; anything else malformed is corrupt_checkpoint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "storage/errors.h"
#include "storage/topic_partition.h"

namespace runnel::storage {

namespace fs = std::filesystem;

inline constexpr const char* kRecoveryPointCheckpointFile = "recovery-point-offset-checkpoint";
inline constexpr const char* kLogStartOffsetCheckpointFile = "log-start-offset-checkpoint";
inline constexpr const char* kCleanerOffsetCheckpointFile = "cleaner-offset-checkpoint";
inline constexpr const char* kLeaderEpochCheckpointFile = "leader-epoch-checkpoint";

struct EpochEntry {
  int32_t epoch = 0;
  int64_t start_offset = 0;
  bool operator==(const EpochEntry&) const = default;
};

using OffsetCheckpoint = std::map<TopicPartition, int64_t>;

std::string format_offset_checkpoint(const OffsetCheckpoint& offsets);
Result<OffsetCheckpoint> parse_offset_checkpoint(std::string_view text);
std::error_code write_offset_checkpoint(const fs::path& file, const OffsetCheckpoint& offsets);
Result<OffsetCheckpoint> read_offset_checkpoint(const fs::path& file);

std::string format_leader_epoch_checkpoint(const std::vector<EpochEntry>& entries);
Result<std::vector<EpochEntry>> parse_leader_epoch_checkpoint(std::string_view text);
std::error_code write_leader_epoch_checkpoint(const fs::path& file, const std::vector<EpochEntry>& entries);
Result<std::vector<EpochEntry>> read_leader_epoch_checkpoint(const fs::path& file);

}  // namespace runnel::storage
