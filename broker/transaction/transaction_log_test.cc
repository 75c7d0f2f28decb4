#include "broker/transaction/transaction_log.h"

#include <catch2/catch.hpp>

using namespace runnel::broker::transaction;

using S = TransactionState;
using TV = TransactionVersion;

namespace {

TxnTransitMetadata ongoing_transit() {
  return {.producer_id = 1000, .prev_producer_id = 999, .next_producer_id = 1001, .producer_epoch = 5,
          .last_producer_epoch = 4, .txn_timeout_ms = 60000, .txn_state = S::ongoing,
          .topic_partitions = {{"b", 1}, {"a", 2}, {"a", 0}}, .txn_start_timestamp = 10,
          .txn_last_update_timestamp = 20, .client_transaction_version = TV::tv2};
}

}  // namespace

TEST_CASE("TransactionLog key is the v0 TransactionLogKey", "[transaction][txnlog]") {
  CHECK(key_to_bytes("ab") == Bytes{0x00, 0x00, 0x00, 0x02, 'a', 'b'});
  CHECK(key_to_bytes(std::string(32767, 'x')));
  CHECK_FALSE(key_to_bytes(std::string(32768, 'x')));
}

TEST_CASE("TransactionLog value groups partitions by topic and leaves the producer id tags unset", "[transaction][txnlog]") {
  auto v = to_log_value(ongoing_transit());
  REQUIRE(v);
  CHECK(v->producer_id == 1000);
  CHECK(v->previous_producer_id == -1);
  CHECK(v->next_producer_id == -1);
  CHECK(v->producer_epoch == 5);
  CHECK(v->transaction_timeout_ms == 60000);
  CHECK(v->transaction_status == 1);
  CHECK(v->transaction_start_timestamp_ms == 10);
  CHECK(v->transaction_last_update_timestamp_ms == 20);
  CHECK(v->client_transaction_version == 2);
  REQUIRE(v->transaction_partitions);
  CHECK(*v->transaction_partitions == std::vector<TransactionLogPartitions>{{"a", {0, 2}}, {"b", {1}}});
}

TEST_CASE("TransactionLog value of Empty has null partitions and Complete has none", "[transaction][txnlog]") {
  auto t = ongoing_transit();
  t.topic_partitions.clear();
  t.txn_state = S::empty;
  auto empty = to_log_value(t);
  REQUIRE(empty);
  CHECK_FALSE(empty->transaction_partitions);
  t.txn_state = S::complete_commit;
  auto complete = to_log_value(t);
  REQUIRE(complete);
  REQUIRE(complete->transaction_partitions);
  CHECK(complete->transaction_partitions->empty());
}

TEST_CASE("TransactionLog refuses an Empty value with partitions", "[transaction][txnlog]") {
  auto t = ongoing_transit();
  t.txn_state = S::empty;
  CHECK_FALSE(to_log_value(t));
  CHECK_FALSE(value_to_bytes(t, TV::tv2));
}

TEST_CASE("TransactionLog value version follows the cluster's transaction version", "[transaction][txnlog]") {
  auto t = ongoing_transit();
  auto v1 = value_to_bytes(t, TV::tv1);
  auto v2 = value_to_bytes(t, TV::tv2);
  REQUIRE((v1 && v2));
  CHECK((*v1)[1] == 1);
  CHECK(*v1 == *v2);
  // v0 cannot carry a client version: a TV_0 cluster has only TV_0 clients.
  CHECK_FALSE(value_to_bytes(t, TV::tv0));
  t.client_transaction_version = TV::tv0;
  auto v0 = value_to_bytes(t, TV::tv0);
  REQUIRE(v0);
  CHECK((*v0)[1] == 0);
}

TEST_CASE("TransactionLog loads metadata as Kafka's readTxnRecordValue", "[transaction][txnlog]") {
  auto bytes = value_to_bytes(ongoing_transit(), TV::tv2);
  REQUIRE(bytes);
  auto value = decode_value(*bytes);
  REQUIRE(value);
  auto m = metadata_from_log_value("txn", *value.value);
  REQUIRE(m);
  CHECK(m.value->transactional_id == "txn");
  CHECK(m.value->producer_id == 1000);
  CHECK(m.value->prev_producer_id == -1);  // not written by Kafka 4.1
  CHECK(m.value->next_producer_id == -1);
  CHECK(m.value->producer_epoch == 5);
  CHECK(m.value->last_producer_epoch == kNoProducerEpoch);  // never persisted
  CHECK(m.value->txn_timeout_ms == 60000);
  CHECK(m.value->state == S::ongoing);
  CHECK(m.value->topic_partitions == ongoing_transit().topic_partitions);
  CHECK(m.value->txn_start_timestamp == 10);
  CHECK(m.value->txn_last_update_timestamp == 20);
  CHECK(m.value->client_transaction_version == TV::tv2);
  CHECK_FALSE(m.value->pending_state);
}

TEST_CASE("TransactionLog loads the producer id tags when present", "[transaction][txnlog]") {
  TransactionLogValue v;
  v.producer_id = 5;
  v.previous_producer_id = 3;
  v.next_producer_id = 6;
  auto m = metadata_from_log_value("txn", v);
  REQUIRE(m);
  CHECK(m.value->prev_producer_id == 3);
  CHECK(m.value->next_producer_id == 6);
}

TEST_CASE("TransactionLog ignores partitions of an Empty value", "[transaction][txnlog]") {
  TransactionLogValue v;
  v.transaction_status = 0;
  v.transaction_partitions = std::vector<TransactionLogPartitions>{{"t", {1}}};
  auto m = metadata_from_log_value("txn", v);
  REQUIRE(m);
  CHECK(m.value->topic_partitions.empty());
}

TEST_CASE("TransactionLog rejects unknown states and versions and missing partitions", "[transaction][txnlog]") {
  TransactionLogValue v;
  v.transaction_partitions.emplace();
  v.transaction_status = 8;
  CHECK_FALSE(metadata_from_log_value("txn", v));
  v.transaction_status = 1;
  v.client_transaction_version = 3;
  CHECK_FALSE(metadata_from_log_value("txn", v));
  v.client_transaction_version = 2;
  CHECK(metadata_from_log_value("txn", v));
  v.transaction_partitions.reset();
  auto missing = metadata_from_log_value("txn", v);
  CHECK_FALSE(missing);
  CHECK_FALSE(missing.error.empty());
}
