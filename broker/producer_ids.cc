#include "broker/producer_ids.h"

#include <charconv>
#include <string>

#include "storage/io.h"

namespace runnel::broker {

std::error_code ProducerIdManager::load() {
  if (!std::filesystem::exists(file_)) return {};
  auto text = storage::read_whole_file(file_);
  if (!text) return text.error();
  int64_t end = 0;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), end);
  if (ec != std::errc() || end < 0) return std::make_error_code(std::errc::invalid_argument);
  next_ = block_end_ = end;
  return {};
}

std::error_code ProducerIdManager::next(int64_t& id) {
  if (next_ >= block_end_) {
    int64_t end = block_end_ + kBlockSize;
    if (auto ec = storage::write_file_atomically(file_, std::to_string(end) + "\n")) return ec;
    block_end_ = end;
  }
  id = next_++;
  return {};
}

}  // namespace runnel::broker
