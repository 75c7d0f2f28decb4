// For the tests that have Kafka's own DumpLogSegments read what a Runnel
// coordinator writes: the records into a fresh log (one batch each, as a
// coordinator appends them), the tool's output, and its lines.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/codec/types.h"
#include "protocol/records/batch_builder.h"
#include "storage/log.h"

namespace runnel::broker::testing {

struct KeyValue {
  protocol::Bytes key;
  std::optional<protocol::Bytes> value;  // nullopt: a tombstone
};

// Writes each record as a batch of its own to the log in `dir`, timestamps
// counting up from `base_timestamp`.
inline void write_log(const std::filesystem::path& dir, const std::vector<KeyValue>& records, int64_t base_timestamp) {
  namespace rec = protocol::records;
  auto log = storage::Log::open(dir, storage::LogConfig{}, {});
  REQUIRE(log);
  for (size_t i = 0; i < records.size(); ++i) {
    rec::Record record;
    record.key = records[i].key;
    if (records[i].value) record.value = *records[i].value;
    rec::BatchSpec spec;
    spec.base_timestamp = base_timestamp + static_cast<int64_t>(i);
    std::vector<rec::Record> one = {record};
    protocol::Bytes batch = rec::build_batch(spec, one);
    REQUIRE((*log)->append(std::span<uint8_t>(batch.data(), batch.size()), 0));
  }
  REQUIRE_FALSE((*log)->close());
}

// kafka.tools.DumpLogSegments --deep-iteration with the decoder flag over
// the segment, on Kafka's jars; its output, stderr included.
inline std::string dump_log_segments(const std::string& classpath, const std::string& decoder,
                                     const std::filesystem::path& segment) {
  const std::string command = "java -cp '" + classpath + "' kafka.tools.DumpLogSegments --deep-iteration " + decoder +
                              " --files " + segment.string() + " 2>&1";
  std::string output;
  FILE* p = popen(command.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) output.append(buf, n);
  CHECK(pclose(p) == 0);
  return output;
}

inline std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (line.find(needle) != std::string::npos) out.push_back(line);
    at = end + 1;
  }
  return out;
}

}  // namespace runnel::broker::testing
