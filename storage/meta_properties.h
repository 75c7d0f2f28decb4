// <log dir>/meta.properties, as a KRaft broker's `kafka-storage format`
// writes it: a Java properties file.
//
//   #
//   #<date, as java.util.Date prints it>
//   node.id=<int>
//   directory.id=<base64 uuid>
//   version=1
//   cluster.id=<string>
//
// (Java's hash order, which is what Kafka produces.) Reading accepts any
// order, comments and blank lines. Written atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "protocol/codec/types.h"
#include "storage/errors.h"

namespace runnel::storage {

inline constexpr const char* kMetaPropertiesFile = "meta.properties";

struct MetaProperties {
  int version = 1;
  std::string cluster_id;
  int32_t node_id = -1;
  protocol::Uuid directory_id;
  bool operator==(const MetaProperties&) const = default;
};

// `now_ms` dates the comment line.
std::string format_meta_properties(const MetaProperties& m, int64_t now_ms);
Result<MetaProperties> parse_meta_properties(std::string_view text);
std::error_code write_meta_properties(const std::filesystem::path& log_dir, const MetaProperties& m);
// not_found when the file is missing.
Result<MetaProperties> read_meta_properties(const std::filesystem::path& log_dir);

}  // namespace runnel::storage
