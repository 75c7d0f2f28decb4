#include "storage/record_times.h"

#include "protocol/records/batch_reader.h"
#include "protocol/records/validate.h"

namespace runnel::storage {

std::optional<std::vector<RecordTime>> record_times(protocol::ByteView batch) {
  namespace r = protocol::records;
  r::BatchRecordReader reader(batch, r::kDefaultMaxDecompressedBytes);
  if (!reader.status().ok()) return std::nullopt;
  const auto& h = reader.header();
  std::vector<RecordTime> out;
  out.reserve(static_cast<size_t>(std::max(h.records_count, 0)));
  r::Record rec;
  while (reader.next(rec)) {
    int64_t ts = h.log_append_time() ? h.max_timestamp : h.base_timestamp + rec.timestamp_delta;
    out.push_back({h.base_offset + rec.offset_delta, ts});
  }
  if (!reader.status().ok()) return std::nullopt;
  return out;
}

}  // namespace runnel::storage
