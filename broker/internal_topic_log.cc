#include "broker/internal_topic_log.h"

#include "protocol/records/batch_reader.h"
#include "protocol/records/validate.h"
#include "storage/io.h"

namespace runnel::broker {

namespace rec = protocol::records;

std::function<KeyedRecords()> read_keyed_records(std::shared_ptr<storage::Log> log) {
  return [log] {
    KeyedRecords out;
    int64_t offset = log->log_start_offset();
    const int64_t end = log->log_end_offset();
    while (offset < end) {
      auto info = log->read(offset, 4 << 20, end);
      if (!info) {
        out.error = info.error().message();
        break;
      }
      const auto& region = info->records;
      if (region.length <= 0) break;
      protocol::Bytes buf(static_cast<size_t>(region.length));
      auto n = storage::pread_full(region.fd, buf.data(), buf.size(), region.offset);
      if (!n || *n != buf.size()) {
        out.error = n ? "short read" : n.error().message();
        break;
      }
      rec::BatchIterator it(protocol::ByteView(buf.data(), buf.size()));
      int64_t next = offset;
      while (auto batch = it.next()) {
        next = batch->header.last_offset() + 1;
        if (batch->header.is_control()) continue;
        rec::BatchRecordReader reader(batch->bytes, rec::kDefaultMaxDecompressedBytes);
        rec::Record r;
        while (reader.next(r)) {
          if (!r.key) continue;
          KeyedRecord kr{protocol::Bytes(r.key->begin(), r.key->end()), std::nullopt};
          if (r.value) kr.value = protocol::Bytes(r.value->begin(), r.value->end());
          out.records.push_back(std::move(kr));
        }
      }
      if (next <= offset) break;
      offset = next;
    }
    return out;
  };
}

std::function<std::error_code()> sync_log(std::shared_ptr<storage::Log> log) {
  return [log] { return log->sync(); };
}

}  // namespace runnel::broker
