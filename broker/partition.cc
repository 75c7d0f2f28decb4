#include "broker/partition.h"

#include <unistd.h>

#include "protocol/records/batch_reader.h"

namespace runnel::broker {

std::error_code Partition::load_producer_state() {
  // Replays every batch header from the log start: the state is exactly
  // what the appends built. Reads go through the log in chunks of whole
  // batches so memory stays bounded.
  constexpr int64_t kChunk = 1 << 20;
  int64_t offset = log_->log_start_offset();
  const int64_t end = log_->log_end_offset();
  protocol::Bytes buf;
  while (offset < end) {
    auto read = log_->read(offset, kChunk, end, true);
    if (!read) return read.error();
    const auto& region = read->records;
    if (region.length <= 0) break;
    buf.resize(static_cast<size_t>(region.length));
    ssize_t n = ::pread(region.fd, buf.data(), buf.size(), region.offset);
    if (n != static_cast<ssize_t>(buf.size())) return std::error_code(n < 0 ? errno : EIO, std::generic_category());
    protocol::records::BatchIterator it(buf);
    int64_t next = offset;
    while (auto b = it.next()) {
      const auto& h = b->header;
      if (h.producer_id >= 0 && !h.is_control()) producers_.update(h, h.base_offset, h.max_timestamp);
      next = h.last_offset() + 1;
    }
    if (next <= offset) break;  // no progress: nothing more to read
    offset = next;
  }
  return {};
}

}  // namespace runnel::broker
