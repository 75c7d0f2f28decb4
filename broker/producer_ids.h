// Producer ids for InitProducerId, unique across restarts.
//
// Like Kafka's controller, ids are handed out in blocks of 1000; the end of
// the current block is made durable in <first log dir>/runnel-producer-ids
// before any id from it is used, so a restart continues after the block and
// never reuses an id that may be in a log.
#pragma once

#include <cstdint>
#include <filesystem>
#include <system_error>

namespace runnel::broker {

class ProducerIdManager {
 public:
  static constexpr int64_t kBlockSize = 1000;

  explicit ProducerIdManager(std::filesystem::path file) : file_(std::move(file)) {}
  std::error_code load();
  // The next unused id; an error when the new block could not be persisted.
  std::error_code next(int64_t& id);

 private:
  std::filesystem::path file_;
  int64_t next_ = 0;
  int64_t block_end_ = 0;  // exclusive; persisted
};

}  // namespace runnel::broker
