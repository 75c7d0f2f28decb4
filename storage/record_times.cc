#include "storage/record_times.h"

#include "protocol/codec/reader.h"
#include "protocol/records/batch_format.h"

namespace runnel::storage {

namespace records = protocol::records;

std::optional<std::vector<RecordTime>> uncompressed_record_times(protocol::ByteView batch) {
  auto h = records::read_batch_header(batch);
  if (!h || h->compression() != records::Compression::none || batch.size() < h->total_size()) return std::nullopt;
  protocol::Reader r(batch.subspan(records::kHeaderSize, h->total_size() - records::kHeaderSize));
  std::vector<RecordTime> out;
  out.reserve(static_cast<size_t>(std::max(h->records_count, 0)));
  for (int32_t i = 0; i < h->records_count && r.ok(); ++i) {
    int32_t len = r.varint();
    if (len < 0 || static_cast<size_t>(len) > r.remaining()) return std::nullopt;
    protocol::Reader rec(r.view(len));
    rec.i8();  // attributes
    int64_t ts_delta = rec.varlong();
    int32_t offset_delta = rec.varint();
    if (!rec.ok()) return std::nullopt;
    out.push_back({h->base_offset + offset_delta, h->base_timestamp + ts_delta});
  }
  if (!r.ok()) return std::nullopt;
  return out;
}

}  // namespace runnel::storage
