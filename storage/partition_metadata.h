// <partition dir>/partition.metadata: which topic id the directory belongs
// to, so a recreated topic of the same name is never confused with the old.
//
//   version: 0\n
//   topic_id: <22-character URL-safe base64 of the UUID>
//
// (no newline after the id, exactly as Kafka writes it). Written atomically.
#pragma once

#include <filesystem>
#include <string>

#include "protocol/codec/types.h"
#include "storage/errors.h"

namespace runnel::storage {

inline constexpr const char* kPartitionMetadataFile = "partition.metadata";

std::string format_partition_metadata(const protocol::Uuid& topic_id);
Result<protocol::Uuid> parse_partition_metadata(std::string_view text);
std::error_code write_partition_metadata(const std::filesystem::path& partition_dir, const protocol::Uuid& topic_id);
// not_found when the file is missing.
Result<protocol::Uuid> read_partition_metadata(const std::filesystem::path& partition_dir);

}  // namespace runnel::storage
