// Shared by the records tests: sample records that own their bytes, and a
// way to seal arbitrary bytes as a batch with a valid CRC.
#pragma once

#include <string>
#include <vector>

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_format.h"
#include "protocol/records/record.h"

namespace runnel::protocol::records::testing {

inline ByteView view_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// Records whose views point into `storage`. Moving the struct keeps them
// valid (a moved vector keeps its elements where they are).
struct SampleRecords {
  std::vector<std::string> storage;
  std::vector<Record> records;
};

// n records with offset deltas 0..n-1: keys "key-i" (null for every third),
// values of `value_size` bytes (null for the fifth), a header on odd ones.
inline SampleRecords sample_records(int n, size_t value_size = 16) {
  SampleRecords s;
  s.storage.reserve(static_cast<size_t>(n) * 3);
  for (int i = 0; i < n; ++i) {
    s.storage.push_back("key-" + std::to_string(i));
    std::string value;
    for (size_t j = 0; j < value_size; ++j) value.push_back(static_cast<char>('a' + (i + j / 7) % 26));
    s.storage.push_back(std::move(value));
    s.storage.push_back("trace-" + std::to_string(i));
  }
  for (int i = 0; i < n; ++i) {
    Record r;
    r.offset_delta = i;
    r.timestamp_delta = i * 3;
    if (i % 3 != 2) r.key = view_of(s.storage[i * 3]);
    if (i != 4) r.value = view_of(s.storage[i * 3 + 1]);
    if (i % 2 == 1) r.headers.push_back({"trace", view_of(s.storage[i * 3 + 2])});
    if (i % 4 == 3) r.headers.push_back({"nil", std::nullopt});
    s.records.push_back(std::move(r));
  }
  return s;
}

inline BatchSpec sample_spec(Compression codec = Compression::none) {
  BatchSpec spec;
  spec.base_offset = 0;
  spec.compression = codec;
  spec.base_timestamp = 1'700'000'000'000;
  spec.producer_id = 4000;
  spec.producer_epoch = 3;
  spec.base_sequence = 17;
  return spec;
}

inline Bytes sample_batch(Compression codec = Compression::none, int n = 5) {
  auto s = sample_records(n);
  return build_batch(sample_spec(codec), s.records);
}

// A batch around `section` exactly as given (not compressed by us), with
// `h`'s fields, a matching batchLength and a valid CRC.
inline Bytes seal_raw(BatchHeader h, ByteView section) {
  Bytes out(kHeaderSize);
  out.insert(out.end(), section.begin(), section.end());
  h.batch_length = static_cast<int32_t>(out.size() - kLogOverhead);
  write_batch_header(h, out.data());
  h.crc = compute_batch_crc(out);
  write_batch_header(h, out.data());
  return out;
}

// Recomputes the CRC after a test damaged a covered byte on purpose.
inline void fix_crc(Bytes& batch) {
  auto h = *read_batch_header(batch);
  h.crc = compute_batch_crc(batch);
  write_batch_header(h, batch.data());
}

}  // namespace runnel::protocol::records::testing
