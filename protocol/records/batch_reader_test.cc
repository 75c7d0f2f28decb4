#include <catch2/catch.hpp>

#include "protocol/records/batch_reader.h"
#include "protocol/records/test_batches.h"
#include "protocol/records/validate.h"

using namespace runnel::protocol;
using namespace runnel::protocol::records;
using namespace runnel::protocol::records::testing;

namespace {

// Three batches back to back, as a log segment or a Fetch response holds them.
Bytes three_batches(std::vector<size_t>* starts = nullptr) {
  Bytes buffer;
  int64_t next_offset = 0;
  for (auto codec : {Compression::none, Compression::zstd, Compression::gzip}) {
    auto s = sample_records(4);
    BatchSpec spec = sample_spec(codec);
    spec.base_offset = next_offset;
    next_offset += 4;
    Bytes batch = build_batch(spec, s.records);
    if (starts) starts->push_back(buffer.size());
    buffer.insert(buffer.end(), batch.begin(), batch.end());
  }
  return buffer;
}

}  // namespace

TEST_CASE("the iterator yields every batch of a buffer in order", "[records]") {
  std::vector<size_t> starts;
  Bytes buffer = three_batches(&starts);
  BatchIterator it(buffer);
  std::vector<int64_t> base_offsets;
  while (auto batch = it.next()) {
    REQUIRE(batch->position == starts[base_offsets.size()]);
    REQUIRE(batch->bytes.data() == buffer.data() + batch->position);
    REQUIRE(validate_batch(batch->bytes, {.from_client = false, .walk_records = true}).ok());
    base_offsets.push_back(batch->header.base_offset);
  }
  REQUIRE(base_offsets == std::vector<int64_t>{0, 4, 8});
  REQUIRE(it.position() == buffer.size());
  REQUIRE(it.partial_bytes() == 0);
  REQUIRE(it.error() == nullptr);
  REQUIRE_FALSE(it.next());  // stays finished
}

TEST_CASE("the iterator stops cleanly at a partial trailing batch, at every cut", "[records]") {
  std::vector<size_t> starts;
  Bytes buffer = three_batches(&starts);
  for (size_t n = 0; n <= buffer.size(); ++n) {
    INFO("cut at " << n);
    BatchIterator it(ByteView(buffer.data(), n));
    size_t complete = 0;
    while (it.next()) ++complete;
    REQUIRE(it.error() == nullptr);
    // Complete batches are those that end at or before the cut.
    size_t expected = 0;
    size_t end_of_expected = 0;
    for (size_t i = 0; i < starts.size(); ++i) {
      size_t end = i + 1 < starts.size() ? starts[i + 1] : buffer.size();
      if (end <= n) {
        ++expected;
        end_of_expected = end;
      }
    }
    REQUIRE(complete == expected);
    REQUIRE(it.position() == end_of_expected);
    REQUIRE(it.partial_bytes() == n - end_of_expected);
  }
}

TEST_CASE("the iterator reports a frame that cannot be a batch", "[records]") {
  std::vector<size_t> starts;
  Bytes buffer = three_batches(&starts);

  Bytes short_length = buffer;
  short_length[starts[1] + kBatchLengthOffset + 3] = 10;
  short_length[starts[1] + kBatchLengthOffset + 2] = 0;
  BatchIterator a(short_length);
  REQUIRE(a.next());
  REQUIRE_FALSE(a.next());
  REQUIRE(a.error() != nullptr);
  REQUIRE(a.position() == starts[1]);

  Bytes old_magic = buffer;
  old_magic[starts[2] + kMagicOffset] = 1;
  BatchIterator b(old_magic);
  REQUIRE(b.next());
  REQUIRE(b.next());
  REQUIRE_FALSE(b.next());
  REQUIRE(b.error() != nullptr);
  REQUIRE(b.position() == starts[2]);

  Bytes negative = buffer;
  negative[kBatchLengthOffset] = 0x80;
  BatchIterator c(negative);
  REQUIRE_FALSE(c.next());
  REQUIRE(c.error() != nullptr);
}

TEST_CASE("the iterator does not check CRCs: validate_batch does", "[records]") {
  Bytes buffer = three_batches();
  buffer[kHeaderSize + 2] ^= 0x01;
  BatchIterator it(buffer);
  auto first = it.next();
  REQUIRE(first);
  REQUIRE(validate_batch(first->bytes, {.from_client = false}).code == ErrorCode::corrupt_message);
  REQUIRE(it.next());
}

TEST_CASE("the record reader decodes records one by one with views into the batch", "[records]") {
  auto s = sample_records(7);
  Bytes batch = build_batch(sample_spec(), s.records);
  BatchRecordReader reader(batch, 1 << 20);
  REQUIRE(reader.status().ok());
  REQUIRE(reader.header().records_count == 7);
  Record r;
  int n = 0;
  while (reader.next(r)) {
    REQUIRE(r == s.records[n]);
    if (r.value) {
      // Uncompressed: the value points into the batch itself.
      REQUIRE(r.value->data() >= batch.data());
      REQUIRE(r.value->data() < batch.data() + batch.size());
    }
    ++n;
  }
  REQUIRE(n == 7);
  REQUIRE(reader.records_read() == 7);
  REQUIRE(reader.status().ok());
  REQUIRE_FALSE(reader.next(r));
}

TEST_CASE("the record reader reports a batch too short for its header", "[records]") {
  Bytes batch = sample_batch();
  BatchRecordReader reader(ByteView(batch.data(), 30), 1 << 20);
  REQUIRE(reader.status().code == ErrorCode::corrupt_message);
  Record r;
  REQUIRE_FALSE(reader.next(r));
}
