#include <catch2/catch.hpp>

#include "broker/producer_state.h"

using namespace runnel::broker;
using runnel::protocol::ErrorCode;
using runnel::protocol::records::BatchHeader;

namespace {

BatchHeader batch(int64_t pid, int16_t epoch, int32_t first_seq, int32_t records) {
  BatchHeader h;
  h.producer_id = pid;
  h.producer_epoch = epoch;
  h.base_sequence = first_seq;
  h.last_offset_delta = records - 1;
  h.records_count = records;
  return h;
}

}  // namespace

TEST_CASE("a producer without state is accepted at any sequence", "[producer]") {
  ProducerStateTable t;
  REQUIRE(t.check(batch(7, 0, 42, 3)).error == ErrorCode::none);
  REQUIRE(t.check(batch(7, 0, 42, 3)).duplicate_of == nullptr);
}

TEST_CASE("in-order batches are accepted and gaps refused", "[producer]") {
  ProducerStateTable t;
  t.update(batch(7, 0, 0, 3), 100, 1);  // seqs 0-2 at offsets 100-102
  REQUIRE(t.check(batch(7, 0, 3, 2)).error == ErrorCode::none);
  REQUIRE(t.check(batch(7, 0, 4, 2)).error == ErrorCode::out_of_order_sequence_number);
  REQUIRE(t.check(batch(7, 0, 1, 2)).error == ErrorCode::out_of_order_sequence_number);  // overlaps, not a duplicate
}

TEST_CASE("a duplicate of any of the last five batches returns its original offsets", "[producer]") {
  ProducerStateTable t;
  int64_t offset = 0;
  for (int i = 0; i < 6; ++i, offset += 2) t.update(batch(7, 0, i * 2, 2), offset, i);
  // Batches 1..5 are retained (seqs 2-3 .. 10-11); batch 0 (seqs 0-1) was evicted.
  auto dup = t.check(batch(7, 0, 4, 2));
  REQUIRE(dup.error == ErrorCode::none);
  REQUIRE(dup.duplicate_of != nullptr);
  REQUIRE(dup.duplicate_of->first_offset == 4);
  REQUIRE(dup.duplicate_of->last_offset == 5);
  REQUIRE(t.check(batch(7, 0, 0, 2)).error == ErrorCode::out_of_order_sequence_number);
  REQUIRE(t.find(7)->batches.size() == ProducerStateTable::kBatchesToRetain);
}

TEST_CASE("epochs: older is fenced, newer must restart at zero", "[producer]") {
  ProducerStateTable t;
  t.update(batch(7, 3, 0, 1), 0, 1);
  REQUIRE(t.check(batch(7, 2, 1, 1)).error == ErrorCode::invalid_producer_epoch);
  REQUIRE(t.check(batch(7, 4, 5, 1)).error == ErrorCode::out_of_order_sequence_number);
  REQUIRE(t.check(batch(7, 4, 0, 1)).error == ErrorCode::none);
  t.update(batch(7, 4, 0, 1), 1, 2);
  REQUIRE(t.find(7)->epoch == 4);
  REQUIRE(t.find(7)->batches.size() == 1);
}

TEST_CASE("sequences wrap from INT32_MAX to 0", "[producer]") {
  ProducerStateTable t;
  t.update(batch(7, 0, INT32_MAX - 1, 2), 0, 1);  // seqs MAX-1, MAX
  REQUIRE(t.check(batch(7, 0, 0, 1)).error == ErrorCode::none);
  t.update(batch(7, 0, INT32_MAX, 3), 10, 1);  // seqs MAX, 0, 1
  REQUIRE(t.find(7)->batches.back().last_seq == 1);
  REQUIRE(t.check(batch(7, 0, 2, 1)).error == ErrorCode::none);
}

TEST_CASE("idle producers expire after producer.id.expiration.ms", "[producer]") {
  ProducerStateTable t;
  t.update(batch(1, 0, 0, 1), 0, 1'000);
  t.update(batch(2, 0, 0, 1), 1, 50'000);
  t.expire(60'000, 20'000);
  REQUIRE(t.find(1) == nullptr);
  REQUIRE(t.find(2) != nullptr);
  REQUIRE(t.check(batch(1, 0, 99, 1)).error == ErrorCode::none);  // no state again: accepted
}

// Kafka's ProducerAppendInfo checks sequences only for AppendOrigin.CLIENT:
// a coordinator's batch (TxnOffsetCommit's records, always sequence 0) has
// its epoch checked, nothing else.
TEST_CASE("a coordinator's batch has only its epoch checked", "[producer]") {
  ProducerStateTable t;
  auto txn = [](BatchHeader h) {
    h.attributes |= runnel::protocol::records::kTransactionalBit;
    return h;
  };
  t.update(txn(batch(7, 3, 0, 1)), 0, 1);
  t.update(txn(batch(7, 3, 0, 1)), 1, 1);
  REQUIRE(t.check(txn(batch(7, 3, 0, 1)), false).error == ErrorCode::none);
  REQUIRE(t.check(txn(batch(7, 3, 0, 1)), false).duplicate_of == nullptr);
  REQUIRE(t.check(txn(batch(7, 2, 0, 1)), false).error == ErrorCode::invalid_producer_epoch);
  // The same batch from a client would be its retained duplicate.
  REQUIRE(t.check(txn(batch(7, 3, 0, 1))).duplicate_of != nullptr);
  REQUIRE(t.has_ongoing_txn(7, 3));
  REQUIRE_FALSE(t.has_ongoing_txn(7, 4));
  REQUIRE(t.check(batch(7, 3, 0, 1), false).error == ErrorCode::invalid_txn_state);
}
