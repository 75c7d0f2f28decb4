// The transaction half of the producer-state table: open transactions, the
// markers that end them, the first unstable offset, and their snapshots.
#include <catch2/catch.hpp>

#include "broker/producer_state.h"

using namespace runnel::broker;
using runnel::protocol::ErrorCode;
using runnel::protocol::records::BatchHeader;
using runnel::protocol::records::ControlRecordType;
using runnel::protocol::records::EndTxnMarker;
using runnel::protocol::records::kTransactionalBit;

namespace {

BatchHeader txn_batch(int64_t pid, int16_t epoch, int32_t first_seq, int32_t records, bool transactional = true) {
  BatchHeader h;
  h.producer_id = pid;
  h.producer_epoch = epoch;
  h.base_sequence = first_seq;
  h.last_offset_delta = records - 1;
  h.records_count = records;
  if (transactional) h.attributes = kTransactionalBit;
  return h;
}

const EndTxnMarker kCommit{ControlRecordType::commit, 0};
const EndTxnMarker kAbort{ControlRecordType::abort, 0};

}  // namespace

TEST_CASE("a transactional batch opens its producer's transaction at its first offset", "[producer][txn]") {
  ProducerStateTable t;
  CHECK_FALSE(t.first_unstable_offset());
  t.update(txn_batch(7, 0, 0, 3), 10, 1);
  t.update(txn_batch(7, 0, 3, 2), 13, 2);  // same transaction: still opened at 10
  REQUIRE(t.first_unstable_offset() == 10);
  CHECK(t.find(7)->current_txn_first_offset == 10);
  REQUIRE(t.ongoing_txns().size() == 1);
  t.update(txn_batch(8, 0, 0, 1), 15, 3);
  CHECK(t.first_unstable_offset() == 10);
  CHECK(t.ongoing_txns().size() == 2);
}

TEST_CASE("a marker ends the transaction which holds the first unstable offset until replicated", "[producer][txn]") {
  ProducerStateTable t;
  t.update(txn_batch(7, 0, 0, 3), 10, 1);
  t.update(txn_batch(8, 0, 0, 1), 13, 1);
  auto done = t.update_marker(7, 0, kAbort, 14, 5);
  REQUIRE(done);
  CHECK(*done == CompletedTxn{7, 10, 14, true});
  // Producer 8's transaction is still open at 13: the aborted one's entry records it.
  CHECK(t.last_stable_offset(*done) == 13);
  t.complete_txn(*done);
  CHECK(t.find(7)->current_txn_first_offset == -1);
  // Unreplicated until the high watermark passes offset 14.
  CHECK(t.first_unstable_offset() == 10);
  t.on_high_watermark_updated(14);
  CHECK(t.first_unstable_offset() == 10);
  t.on_high_watermark_updated(15);
  CHECK(t.first_unstable_offset() == 13);

  auto committed = t.update_marker(8, 0, kCommit, 15, 6);
  REQUIRE(committed);
  CHECK_FALSE(committed->aborted);
  CHECK(t.last_stable_offset(*committed) == 16);  // nothing else open: the marker's offset + 1
  t.complete_txn(*committed);
  t.on_high_watermark_updated(16);
  CHECK_FALSE(t.first_unstable_offset());
}

TEST_CASE("a marker with no transaction open completes nothing but updates the producer", "[producer][txn]") {
  ProducerStateTable t;
  CHECK_FALSE(t.update_marker(7, 2, {ControlRecordType::commit, 4}, 0, 9));
  REQUIRE(t.find(7));
  CHECK(t.find(7)->epoch == 2);
  CHECK(t.find(7)->coordinator_epoch == 4);
  CHECK_FALSE(t.first_unstable_offset());
}

TEST_CASE("a producer with a transaction open may write only transactional batches", "[producer][txn]") {
  ProducerStateTable t;
  t.update(txn_batch(7, 0, 0, 1), 0, 1);
  CHECK(t.check(txn_batch(7, 0, 1, 1, false)).error == ErrorCode::invalid_txn_state);
  CHECK(t.check(txn_batch(7, 0, 1, 1)).error == ErrorCode::none);
  // The sequence rule is checked first, as Kafka's appendDataBatch does.
  CHECK(t.check(txn_batch(7, 0, 5, 1, false)).error == ErrorCode::out_of_order_sequence_number);
  // A duplicate is still acknowledged.
  CHECK(t.check(txn_batch(7, 0, 0, 1, false)).duplicate_of != nullptr);
  t.update_marker(7, 0, kCommit, 1, 2);
  CHECK(t.check(txn_batch(7, 0, 1, 1, false)).error == ErrorCode::none);
}

TEST_CASE("markers are checked against the producer epoch and the coordinator epoch", "[producer][txn]") {
  ProducerStateTable t;
  CHECK(t.check_marker(7, 0, kCommit, 0) == ErrorCode::none);  // unknown producer
  t.update(txn_batch(7, 3, 0, 1), 0, 1);
  CHECK(t.check_marker(7, 2, kCommit, 0) == ErrorCode::invalid_producer_epoch);
  CHECK(t.check_marker(7, 3, kCommit, 0) == ErrorCode::none);
  // Transaction version 2: the coordinator bumps the epoch before the marker.
  CHECK(t.check_marker(7, 3, kCommit, 2) == ErrorCode::invalid_producer_epoch);
  CHECK(t.check_marker(7, 4, kCommit, 2) == ErrorCode::none);
  t.update_marker(7, 4, {ControlRecordType::commit, 5}, 1, 2);
  // A retried version 2 marker in the epoch it was written in, nothing open: accepted.
  CHECK(t.check_marker(7, 4, {ControlRecordType::commit, 5}, 2) == ErrorCode::none);
  CHECK(t.check_marker(7, 4, {ControlRecordType::commit, 4}, 0) == ErrorCode::transaction_coordinator_fenced);
  CHECK(t.check_marker(7, 4, {ControlRecordType::commit, 6}, 0) == ErrorCode::none);
}

TEST_CASE("a producer with a transaction open does not expire", "[producer][txn]") {
  ProducerStateTable t;
  t.update(txn_batch(7, 0, 0, 1), 0, 1);
  t.update(txn_batch(8, 0, 0, 1, false), 1, 1);
  t.expire(1'000'000, 10);
  CHECK(t.find(7));
  CHECK_FALSE(t.find(8));
  CHECK(t.snapshot_entries(1'000'000, 10).size() == 1);
}

TEST_CASE("snapshots keep the coordinator epoch and the open transaction", "[producer][txn]") {
  ProducerStateTable t;
  t.update_marker(7, 1, {ControlRecordType::commit, 9}, 0, 1);
  t.update(txn_batch(7, 1, 0, 2), 5, 2);
  auto entries = t.snapshot_entries(3, 1000);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].coordinator_epoch == 9);
  CHECK(entries[0].current_txn_first_offset == 5);

  ProducerStateTable loaded;
  loaded.load(entries[0]);
  CHECK(loaded.first_unstable_offset() == 5);
  CHECK(loaded.check_marker(7, 1, {ControlRecordType::commit, 8}, 0) == ErrorCode::transaction_coordinator_fenced);
  auto done = loaded.update_marker(7, 1, kCommit, 7, 4);
  REQUIRE(done);
  CHECK(done->first_offset == 5);
  loaded.clear();
  CHECK_FALSE(loaded.first_unstable_offset());
}

// What the cleaner keeps (storage::ActiveProducers): each producer's last
// data offset and epoch, none after a marker of a new epoch, gone on expiry.
TEST_CASE("the log's active producers follow the table", "[producer][txn]") {
  using runnel::storage::LastRecord;
  runnel::storage::ActiveProducers mirror;
  ProducerStateTable t;
  t.update(txn_batch(7, 0, 0, 3, false), 100, 1);
  t.mirror_to(&mirror);  // starts from what the table has
  REQUIRE(mirror.snapshot().at(7) == LastRecord{102, 0});
  t.update(txn_batch(8, 2, 0, 2), 103, 2);
  REQUIRE(mirror.snapshot().at(8) == LastRecord{104, 2});
  t.update_marker(8, 2, kCommit, 105, 3);  // same epoch: the data batch is still the last
  REQUIRE(mirror.snapshot().at(8) == LastRecord{104, 2});
  t.update_marker(8, 3, kAbort, 106, 4);  // a new epoch: the marker is the last write
  REQUIRE(mirror.snapshot().at(8) == LastRecord{std::nullopt, 3});
  t.expire(50'000, 20'000);
  REQUIRE(mirror.snapshot().empty());
  runnel::storage::ProducerSnapshotEntry e;
  e.producer_id = 9;
  e.epoch = 1;
  e.last_sequence = 4;
  e.last_offset = 50;
  e.offset_delta = 4;
  e.timestamp = 60'000;
  t.load(e);
  REQUIRE(mirror.snapshot().at(9) == LastRecord{50, 1});
  t.clear();
  REQUIRE(mirror.snapshot().empty());
}
