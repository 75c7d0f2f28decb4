// The coordinator records of __consumer_offsets: every type round-trips,
// and Runnel writes the bytes Kafka 4.1.1 writes. The expected bytes were
// produced by Kafka 4.1.1's own generated classes (kafka-group-coordinator
// and kafka-clients jars: MessageUtil.toCoordinatorTypePrefixedByteBuffer for
// keys, toVersionPrefixedByteBuffer(0, value) for values) from the same
// field values.
#include "protocol/coordinator_record.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "protocol/coordinator/all_records.h"

using namespace runnel::protocol;

namespace {

std::string hex(const Bytes& b) {
  std::string s;
  char buf[3];
  for (uint8_t c : b) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    s += buf;
  }
  return s;
}

Uuid uuid(uint64_t hi, uint64_t lo) {
  Uuid u;
  for (int i = 0; i < 8; ++i) {
    u.bytes[i] = static_cast<uint8_t>(hi >> (56 - 8 * i));
    u.bytes[8 + i] = static_cast<uint8_t>(lo >> (56 - 8 * i));
  }
  return u;
}

const Uuid t1 = uuid(0, 1);
const Uuid t2 = uuid(0x0102030405060708ULL, 0x090a0b0c0d0e0f10ULL);

template <typename Rec>
void check_golden(const typename Rec::Key& key, const typename Rec::Value& value, const char* key_hex,
                  const char* value_hex) {
  CHECK(hex(record_key<Rec>(key)) == key_hex);
  CHECK(hex(record_value<Rec>(value)) == value_hex);
  auto k = decode_record_key<Rec>(record_key<Rec>(key));
  REQUIRE(k.has_value());
  CHECK(*k == key);
  auto v = decode_record_value<Rec>(record_value<Rec>(value));
  REQUIRE(v.has_value());
  CHECK(*v == value);
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("every coordinator record round-trips, key and value", "[coordinator_record]", AllRecords) {
  using Rec = TestType;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Randomizer rnd(seed);
    typename Rec::Key key;
    key.randomize(rnd, Rec::key_version);
    auto k = decode_record_key<Rec>(record_key<Rec>(key));
    REQUIRE(k.has_value());
    CHECK(*k == key);
    for (int16_t v = Rec::value_min_version; v <= Rec::value_max_version; ++v) {
      typename Rec::Value value;
      value.randomize(rnd, v);
      Bytes bytes = record_value<Rec>(value, v);
      auto back = decode_record_value<Rec>(bytes);
      REQUIRE(back.has_value());
      CHECK(*back == value);
      // Any strict prefix is refused, never half-read.
      for (size_t cut = 0; cut < bytes.size(); ++cut)
        CHECK_FALSE(decode_record_value<Rec>(ByteView(bytes.data(), cut)).has_value());
    }
  }
}

TEST_CASE("a record of another type, an unknown version or trailing bytes is refused", "[coordinator_record]") {
  ConsumerGroupMetadataKey key;
  key.group_id = "g1";
  Bytes k = record_key<ConsumerGroupMetadataRecord>(key);
  CHECK(record_type(k) == 3);
  CHECK_FALSE(record_type(ByteView(k.data(), 1)).has_value());
  CHECK_FALSE(decode_record_key<ConsumerGroupTargetAssignmentMetadataRecord>(k).has_value());
  k.push_back(0);
  CHECK_FALSE(decode_record_key<ConsumerGroupMetadataRecord>(k).has_value());

  ConsumerGroupMetadataValue value;
  value.epoch = 7;
  Bytes v = record_value<ConsumerGroupMetadataRecord>(value);
  v[1] = 1;  // version 1: not one Kafka 4.1.1 knows either
  CHECK_FALSE(decode_record_value<ConsumerGroupMetadataRecord>(v).has_value());
}

TEST_CASE("ConsumerGroupMetadata: Kafka's bytes, the metadata hash tagged", "[coordinator_record]") {
  ConsumerGroupMetadataKey key;
  key.group_id = "g1";
  ConsumerGroupMetadataValue value;
  value.epoch = 7;
  CHECK(hex(record_value<ConsumerGroupMetadataRecord>(value)) == "00000000000700");
  value.metadata_hash = 0x0102030405060708;
  check_golden<ConsumerGroupMetadataRecord>(key, value, "000300026731", "0000000000070100080102030405060708");
}

TEST_CASE("ConsumerGroupMemberMetadata: Kafka's bytes, with and without classic metadata", "[coordinator_record]") {
  ConsumerGroupMemberMetadataValue plain;
  plain.rack_id = "r1";
  plain.client_id = "c1";
  plain.client_host = "/127.0.0.1";
  plain.subscribed_topic_names = {"a", "b"};
  plain.rebalance_timeout_ms = 300000;
  plain.server_assignor = "uniform";
  check_golden<ConsumerGroupMemberMetadataRecord>(
      {.group_id = "g1", .member_id = "m1"}, plain, "00050002673100026d31",
      "0000000372310363310b2f3132372e302e302e31030261026200000493e008756e69666f726d00");

  ConsumerGroupMemberMetadataValue classic;
  classic.instance_id = "i1";
  classic.rack_id = "";  // Kafka's generated classes default to "", not null
  classic.client_id = "c1";
  classic.client_host = "h";
  classic.subscribed_topic_regex = "a.*";
  classic.rebalance_timeout_ms = 5000;
  classic.server_assignor = "";
  classic.classic_member_metadata.emplace();
  classic.classic_member_metadata->session_timeout_ms = 45000;
  classic.classic_member_metadata->supported_protocols.emplace_back();
  classic.classic_member_metadata->supported_protocols.back().name = "range";
  classic.classic_member_metadata->supported_protocols.back().metadata = {1, 2};
  check_golden<ConsumerGroupMemberMetadataRecord>(
      {.group_id = "g1", .member_id = "m1"}, classic, "00050002673100026d31",
      "00000369310103633102680104612e2a0000138801010011010000afc8020672616e67650301020000");
}

TEST_CASE("ConsumerGroupTargetAssignment metadata and member: Kafka's bytes", "[coordinator_record]") {
  ConsumerGroupTargetAssignmentMetadataKey key;
  key.group_id = "g1";
  ConsumerGroupTargetAssignmentMetadataValue value;
  value.assignment_epoch = 7;
  check_golden<ConsumerGroupTargetAssignmentMetadataRecord>(key, value, "000600026731", "00000000000700");
  ConsumerGroupTargetAssignmentMemberValue member;
  member.topic_partitions.emplace_back();
  member.topic_partitions.back().topic_id = t1;
  member.topic_partitions.back().partitions = {0, 2};
  check_golden<ConsumerGroupTargetAssignmentMemberRecord>(
      {.group_id = "g1", .member_id = "m1"}, member, "00070002673100026d31",
      "000002000000000000000000000000000000010300000000000000020000");
}

TEST_CASE("ConsumerGroupCurrentMemberAssignment: Kafka's bytes", "[coordinator_record]") {
  ConsumerGroupCurrentMemberAssignmentValue current;
  current.member_epoch = 5;
  current.previous_member_epoch = 4;
  current.state = 1;
  current.assigned_partitions.resize(1);
  current.assigned_partitions[0].topic_id = t1;
  current.assigned_partitions[0].partitions = {0, 2};
  current.partitions_pending_revocation.resize(1);
  current.partitions_pending_revocation[0].topic_id = t2;
  current.partitions_pending_revocation[0].partitions = {1};
  check_golden<ConsumerGroupCurrentMemberAssignmentRecord>(
      {.group_id = "g1", .member_id = "m1"}, current, "00080002673100026d31",
      "0000000000050000000401020000000000000000000000000000000103000000000000000200020102030405060708090a0b0c0d0e0f1"
      "002000000010000");
}

TEST_CASE("ConsumerGroupRegularExpression: Kafka's bytes", "[coordinator_record]") {
  ConsumerGroupRegularExpressionKey key;
  key.group_id = "g1";
  key.regular_expression = "a.*";
  ConsumerGroupRegularExpressionValue value;
  value.topics = {"a"};
  value.version = 12;
  value.timestamp = 1700000000000;
  check_golden<ConsumerGroupRegularExpressionRecord>(key, value, "0010000267310003612e2a",
                                                     "0000020261000000000000000c0000018bcfe5680000");
}
