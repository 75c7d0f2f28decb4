#include "protocol/records/control_record.h"

#include <catch2/catch.hpp>

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_reader.h"

using namespace runnel::protocol;
using namespace runnel::protocol::records;

namespace {

Bytes control_batch(const Bytes& key, const Bytes& value) {
  Record r;
  r.key = ByteView(key);
  r.value = ByteView(value);
  BatchSpec spec;
  spec.transactional = true;
  spec.control = true;
  spec.producer_id = 7;
  spec.producer_epoch = 1;
  const Record records[] = {r};
  return build_batch(spec, records);
}

std::optional<EndTxnMarker> marker_of(const Bytes& batch) {
  auto h = read_batch_header(batch);
  REQUIRE(h);
  return read_end_txn_marker(batch, *h);
}

}  // namespace

TEST_CASE("an end transaction marker batch holds Kafka's control key and value bytes", "[control_record]") {
  const Bytes batch = build_end_txn_marker_batch(4242, 3, {ControlRecordType::commit, 17}, 1'700'000'000'000);
  auto h = read_batch_header(batch);
  REQUIRE(h);
  CHECK(h->is_control());
  CHECK(h->is_transactional());
  CHECK(h->attributes == 0x30);  // bits 4 and 5, no codec
  CHECK(h->producer_id == 4242);
  CHECK(h->producer_epoch == 3);
  CHECK(h->base_sequence == -1);
  CHECK(h->records_count == 1);
  CHECK(h->base_timestamp == 1'700'000'000'000);

  BatchRecordReader reader(batch, 1 << 16);
  Record r;
  REQUIRE(reader.next(r));
  REQUIRE(r.key);
  REQUIRE(r.value);
  // Key: version 0, type 1 (COMMIT). Value: version 0, coordinator epoch 17.
  CHECK(Bytes(r.key->begin(), r.key->end()) == Bytes{0x00, 0x00, 0x00, 0x01});
  CHECK(Bytes(r.value->begin(), r.value->end()) == Bytes{0x00, 0x00, 0x00, 0x00, 0x00, 0x11});
  CHECK(r.headers.empty());
  CHECK_FALSE(reader.next(r));
  CHECK(reader.status().ok());
}

TEST_CASE("end transaction markers read back as written", "[control_record]") {
  for (auto type : {ControlRecordType::abort, ControlRecordType::commit}) {
    const EndTxnMarker written{type, 123456};
    auto read = marker_of(build_end_txn_marker_batch(1, 0, written, 5));
    REQUIRE(read);
    CHECK(*read == written);
    CHECK(read->commit() == (type == ControlRecordType::commit));
  }
}

TEST_CASE("control records that are no end transaction marker read as none", "[control_record]") {
  // LEADER_CHANGE (type 2) is a control record but no marker.
  CHECK_FALSE(marker_of(control_batch({0, 0, 0, 2}, {0, 0, 0, 0, 0, 1})));
  // A negative key version, a truncated key, a truncated value.
  CHECK_FALSE(marker_of(control_batch({0xff, 0xff, 0, 1}, {0, 0, 0, 0, 0, 1})));
  CHECK_FALSE(marker_of(control_batch({0, 0, 0}, {0, 0, 0, 0, 0, 1})));
  CHECK_FALSE(marker_of(control_batch({0, 0, 0, 0}, {0, 0, 0, 0, 0})));
  // A newer value version with a field appended still reads.
  auto newer = marker_of(control_batch({0, 0, 0, 0}, {0, 1, 0, 0, 0, 9, 0xaa}));
  REQUIRE(newer);
  CHECK(newer->coordinator_epoch == 9);
  CHECK(newer->type == ControlRecordType::abort);
}

TEST_CASE("a data batch has no end transaction marker", "[control_record]") {
  Bytes key{0, 0, 0, 1};
  Bytes value{0, 0, 0, 0, 0, 1};
  Record r;
  r.key = ByteView(key);
  r.value = ByteView(value);
  BatchSpec spec;
  spec.transactional = true;
  const Record records[] = {r};
  CHECK_FALSE(marker_of(build_batch(spec, records)));
}
