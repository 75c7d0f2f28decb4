#include "broker/transaction/transaction_log_format.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <initializer_list>

using namespace runnel::broker::transaction;

namespace {

// Ongoing, producer 1000 epoch 5, a 60 s timeout, partitions t-0 and t-2.
TransactionLogValue ongoing_value() {
  return {.producer_id = 1000, .producer_epoch = 5, .transaction_timeout_ms = 60000, .transaction_status = 1,
          .transaction_partitions = std::vector<TransactionLogPartitions>{{"t", {0, 2}}},
          .transaction_last_update_timestamp_ms = 1700000000000, .transaction_start_timestamp_ms = 1699999999000};
}

// The bytes below are written out field by field from TransactionLogValue.json
// (and are what Kafka 4.1.1's generated TransactionLogValue writes for these
// values with MessageUtil.toVersionPrefixedBytes).
const Bytes kOngoingV0 = {
    0x00, 0x00,                                      // version 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xE8,  // producerId 1000
    0x00, 0x05,                                      // producerEpoch 5
    0x00, 0x00, 0xEA, 0x60,                          // transactionTimeoutMs 60000
    0x01,                                            // transactionStatus Ongoing
    0x00, 0x00, 0x00, 0x01,                          // 1 topic
    0x00, 0x01, 't',                                 //   topic "t"
    0x00, 0x00, 0x00, 0x02,                          //   2 partition ids
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,  //   0, 2
    0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00,  // lastUpdate 1700000000000
    0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x64, 0x18,  // start 1699999999000
};

const Bytes kOngoingV1Tv2 = {
    0x00, 0x01,                                      // version 1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xE8,  // producerId 1000
    0x00, 0x05,                                      // producerEpoch 5
    0x00, 0x00, 0xEA, 0x60,                          // transactionTimeoutMs 60000
    0x01,                                            // transactionStatus Ongoing
    0x02,                                            // compact array: 1 topic
    0x02, 't',                                       //   compact string "t"
    0x03,                                            //   compact array: 2 ids
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,  //   0, 2
    0x00,                                            //   no tagged fields
    0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00,  // lastUpdate
    0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x64, 0x18,  // start
    0x01,                                            // 1 tagged field
    0x02, 0x02, 0x00, 0x02,                          // tag 2 size 2: clientTransactionVersion 2
};

// Empty (null partitions) with both producer-id tags and the default version.
const Bytes kEmptyV1Tags = {
    0x00, 0x01,                                      // version 1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2A,  // producerId 42
    0x00, 0x00,                                      // producerEpoch 0
    0x00, 0x00, 0x03, 0xE8,                          // transactionTimeoutMs 1000
    0x00,                                            // transactionStatus Empty
    0x00,                                            // null partitions
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09,  // lastUpdate 9
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  // start -1
    0x02,                                            // 2 tagged fields
    0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,  // tag 0: previousProducerId 7
    0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08,  // tag 1: nextProducerId 8
};

TransactionLogValue empty_value_with_tags() {
  return {.producer_id = 42, .previous_producer_id = 7, .next_producer_id = 8, .producer_epoch = 0,
          .transaction_timeout_ms = 1000, .transaction_status = 0, .transaction_partitions = std::nullopt,
          .transaction_last_update_timestamp_ms = 9,
          .transaction_start_timestamp_ms = -1};
}

// `b` with `bytes` written over it from `at`.
Bytes patched(Bytes b, size_t at, std::initializer_list<uint8_t> bytes) {
  std::copy(bytes.begin(), bytes.end(), b.begin() + static_cast<std::ptrdiff_t>(at));
  return b;
}

}  // namespace

TEST_CASE("TransactionLogKey v0 is an int16 version and the id as an int16-length string", "[transaction][txnlog]") {
  Bytes expected = {0x00, 0x00, 0x00, 0x06, 'm', 'y', '-', 't', 'x', 'n'};
  CHECK(encode_key({"my-txn"}) == expected);
  CHECK_FALSE(encode_key({std::string(kMaxStringBytes + 1, 'x')}));
  auto k = decode_key(expected);
  REQUIRE(k);
  CHECK(k.value->transactional_id == "my-txn");
}

TEST_CASE("TransactionLogKey rejects other versions and bad lengths", "[transaction][txnlog]") {
  CHECK_FALSE(decode_key(Bytes{0x00, 0x01, 0x00, 0x00}));
  CHECK_FALSE(decode_key(Bytes{0x00, 0x00, 0xFF, 0xFF}));       // null id
  CHECK_FALSE(decode_key(Bytes{0x00, 0x00, 0x00, 0x05, 'a'}));  // past the end
  CHECK_FALSE(decode_key(Bytes{0x00}));
  CHECK_FALSE(decode_key(Bytes{}));
  auto k = decode_key(Bytes{0x00, 0x00, 0x00, 0x00});
  REQUIRE(k);
  CHECK(k.value->transactional_id.empty());
}

TEST_CASE("TransactionLogValue v0 matches the schema bytes", "[transaction][txnlog]") {
  CHECK(encode_value(ongoing_value(), 0) == kOngoingV0);
  CHECK_FALSE(encode_value(ongoing_value(), 2));
  auto v = decode_value(kOngoingV0);
  REQUIRE(v);
  CHECK(*v.value == ongoing_value());
}

TEST_CASE("TransactionLogValue v0 refuses tagged fields not at their default", "[transaction][txnlog]") {
  auto tagged = ongoing_value();
  tagged.client_transaction_version = 2;
  CHECK_FALSE(encode_value(tagged, 0));
  tagged = ongoing_value();
  tagged.previous_producer_id = 3;
  CHECK_FALSE(encode_value(tagged, 0));
  tagged = ongoing_value();
  tagged.next_producer_id = 3;
  CHECK_FALSE(encode_value(tagged, 0));
}

TEST_CASE("TransactionLogValue v1 is flexible with the client version tagged", "[transaction][txnlog]") {
  auto value = ongoing_value();
  value.client_transaction_version = 2;
  CHECK(encode_value(value, 1) == kOngoingV1Tv2);
  auto v = decode_value(kOngoingV1Tv2);
  REQUIRE(v);
  CHECK(*v.value == value);
}

TEST_CASE("TransactionLogValue v1 writes null partitions and the producer id tags in tag order", "[transaction][txnlog]") {
  CHECK(encode_value(empty_value_with_tags(), 1) == kEmptyV1Tags);
  auto v = decode_value(kEmptyV1Tags);
  REQUIRE(v);
  CHECK(*v.value == empty_value_with_tags());
  CHECK_FALSE(v.value->transaction_partitions.has_value());
}

TEST_CASE("TransactionLogValue v1 without tags ends in a zero count", "[transaction][txnlog]") {
  Bytes b = encode_value(ongoing_value(), 1).value();
  REQUIRE(b.size() == kOngoingV1Tv2.size() - 4);
  CHECK(b.back() == 0x00);
  CHECK(std::equal(b.begin(), b.end() - 1, kOngoingV1Tv2.begin()));
}

TEST_CASE("TransactionLogValue round trips empty and many partitions", "[transaction][txnlog]") {
  auto value = ongoing_value();
  value.transaction_partitions = std::vector<TransactionLogPartitions>{{"a", {}}, {"b", {1, 2, 3}}, {"", {7}}};
  auto v0 = decode_value(encode_value(value, 0).value());
  REQUIRE(v0);
  CHECK(*v0.value == value);
  value.client_transaction_version = 1;
  value.next_producer_id = 5;
  auto v1 = decode_value(encode_value(value, 1).value());
  REQUIRE(v1);
  CHECK(*v1.value == value);
}

TEST_CASE("TransactionLogValue rejects every truncation", "[transaction][txnlog]") {
  for (const Bytes* full : {&kOngoingV0, &kOngoingV1Tv2, &kEmptyV1Tags}) {
    for (size_t n = 0; n < full->size(); ++n) {
      Bytes prefix(full->begin(), full->begin() + static_cast<std::ptrdiff_t>(n));
      auto v = decode_value(prefix);
      CHECK_FALSE(v);
      CHECK_FALSE(v.error.empty());
    }
  }
}

TEST_CASE("TransactionLogValue rejects unknown versions", "[transaction][txnlog]") {
  Bytes b = kOngoingV0;
  b[1] = 0x02;  // version 2
  CHECK_FALSE(decode_value(b));
  b[0] = 0xFF, b[1] = 0xFF;  // version -1
  CHECK_FALSE(decode_value(b));
}

TEST_CASE("TransactionLogValue rejects null and oversized fields", "[transaction][txnlog]") {
  CHECK_FALSE(decode_value(patched(kOngoingV0, 21, {0xFF, 0xFF})));              // a null topic
  CHECK_FALSE(decode_value(patched(kOngoingV0, 24, {0xFF, 0xFF, 0xFF, 0xFF})));  // null partition ids
  CHECK_FALSE(decode_value(patched(kOngoingV0, 17, {0x7F})));                    // topics past the end
  CHECK_FALSE(decode_value(patched(kOngoingV1Tv2, 18, {0x00})));                 // a null compact topic
  CHECK_FALSE(decode_value(patched(kOngoingV1Tv2, 20, {0x00})));                 // null compact ids
  CHECK_FALSE(decode_value(patched(kOngoingV1Tv2, 17, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})));  // a 6-byte varint
  CHECK_FALSE(decode_value(patched(kOngoingV1Tv2, 48, {0x01})));  // clientTransactionVersion in one byte
  CHECK_FALSE(decode_value(patched(kOngoingV1Tv2, 48, {0x09})));  // a tagged field past the end
}

// Under the sanitizers of the debug build: any byte changed, anywhere, and
// random input decode to a value or an error, never past the input.
TEST_CASE("TransactionLogValue survives every single-byte corruption and random input", "[transaction][txnlog]") {
  for (const Bytes* full : {&kOngoingV0, &kOngoingV1Tv2, &kEmptyV1Tags}) {
    for (size_t at = 0; at < full->size(); ++at)
      for (uint8_t x : {0x00, 0x01, 0x7F, 0x80, 0xFF}) {
        auto v = decode_value(patched(*full, at, {x}));
        CHECK((v.value.has_value() || !v.error.empty()));
      }
  }
  uint32_t seed = 12345;
  for (int i = 0; i < 2000; ++i) {
    Bytes b(static_cast<size_t>(i % 64));
    for (auto& x : b) x = static_cast<uint8_t>((seed = seed * 1103515245 + 12345) >> 16);
    if (b.size() >= 2) {  // mostly the known versions
      b[0] = 0;
      b[1] = static_cast<uint8_t>(i % 2);
    }
    (void)decode_value(b);
    (void)decode_key(b);
  }
}

TEST_CASE("TransactionLogValue skips unknown tagged fields", "[transaction][txnlog]") {
  Bytes b = kOngoingV1Tv2;
  b[b.size() - 5] = 0x02;                       // 2 tagged fields
  for (uint8_t x : {0x05, 0x03, 0xAA, 0xBB, 0xCC}) b.push_back(x);  // tag 5, 3 bytes
  auto v = decode_value(b);
  REQUIRE(v);
  CHECK(v.value->client_transaction_version == 2);
  CHECK(v.value->transaction_partitions->at(0).partition_ids == std::vector<int32_t>{0, 2});
}

TEST_CASE("TransactionLogValue refuses strings longer than 32767 bytes", "[transaction][txnlog]") {
  auto value = ongoing_value();
  value.transaction_partitions->at(0).topic = std::string(kMaxStringBytes + 1, 't');
  CHECK_FALSE(encode_value(value, 0));
  CHECK_FALSE(encode_value(value, 1));
  // A compact string of 32768 bytes, which Kafka's reader refuses too.
  Bytes b(kOngoingV1Tv2.begin(), kOngoingV1Tv2.begin() + 18);
  for (uint8_t x : {0x81, 0x80, 0x02}) b.push_back(x);  // uvarint 32769: length 32768
  b.resize(b.size() + 32768 + 64, 0x00);
  CHECK_FALSE(decode_value(b));
}

TEST_CASE("TransactionLogValue accepts trailing bytes as Kafka's reader does", "[transaction][txnlog]") {
  Bytes b = kOngoingV0;
  b.push_back(0x42);
  auto v = decode_value(b);
  REQUIRE(v);
  CHECK(*v.value == ongoing_value());
}

// Expected values from Java: Utils.abs("...".hashCode()) % 50.
TEST_CASE("transaction_partition_for is Java's String hashCode modulo the partition count", "[transaction][txnlog]") {
  CHECK(transaction_partition_for("", 50) == 0);
  CHECK(transaction_partition_for("a", 50) == 47);
  CHECK(transaction_partition_for("my-txn", 50) == 45);  // hashCode -1061187895
  CHECK(transaction_partition_for("transactional-id-1", 50) == 41);
  CHECK(transaction_partition_for("txn-\xC3\xA9", 50) == 44);               // txn-é
  CHECK(transaction_partition_for("txn-\xF0\x9F\x98\x80", 50) == 6);        // a surrogate pair
  CHECK(transaction_partition_for("polygenelubricants", 50) == 0);          // hashCode Integer.MIN_VALUE
  CHECK(transaction_partition_for(std::string(20, 'z'), 50) == 18);
  CHECK(transaction_partition_for("my-txn", 1) == 0);
}
