// DescribeTopicPartitions v0 byte for byte: the nullable Cursor struct is an
// int8 marker (-1 null, 1 present) before its fields, as Kafka's generated
// Java code writes it, and the nullable ELR arrays are compact arrays (0
// null, 1 empty). The bytes are written out by hand from Kafka's schema.
#include <catch2/catch.hpp>

#include "protocol/messages/75_describe_topic_partitions.h"

using namespace runnel::protocol;

namespace {

template <typename Msg>
Bytes encode(const Msg& m) {
  Bytes out;
  Writer w(out);
  m.encode(w, 0);
  return out;
}

// Decodes all of `wire`, which must be one whole message.
template <typename Msg>
Msg decode_all(const Bytes& wire) {
  Reader r(wire);
  Msg m;
  m.decode(r, 0);
  REQUIRE(r.ok());
  REQUIRE(r.remaining() == 0);
  return m;
}

}  // namespace

TEST_CASE("DescribeTopicPartitions request as Kafka's admin client sends it", "[codec]") {
  // Topics ["t"], ResponsePartitionLimit 2000 (the default), Cursor null.
  const Bytes wire = {0x02, 0x02, 't', 0x00,  // one topic: compact "t", no tags
                      0x00, 0x00, 0x07, 0xd0,  // 2000
                      0xff,                    // Cursor null
                      0x00};                   // no tags
  DescribeTopicPartitionsRequest req;
  req.topics.push_back({"t", {}});
  REQUIRE(encode(req) == wire);

  auto decoded = decode_all<DescribeTopicPartitionsRequest>(wire);
  REQUIRE(decoded.response_partition_limit == 2000);
  REQUIRE_FALSE(decoded.cursor.has_value());

  // The next page: Cursor {"t", 3}.
  req.cursor = DescribeTopicPartitionsCursor{"t", 3, {}};
  const Bytes paged = {0x02, 0x02, 't', 0x00, 0x00, 0x00, 0x07, 0xd0,
                       0x01, 0x02, 't', 0x00, 0x00, 0x00, 0x03, 0x00,  // present, "t", 3, no tags
                       0x00};
  REQUIRE(encode(req) == paged);
  REQUIRE(decode_all<DescribeTopicPartitionsRequest>(paged).cursor == req.cursor);
}

TEST_CASE("DescribeTopicPartitions response with empty ELR lists and no next cursor", "[codec]") {
  DescribeTopicPartitionsResponse resp;
  auto& t = resp.topics.emplace_back();
  t.name = "t";
  t.topic_authorized_operations = 0x0df8;
  auto& part = t.partitions.emplace_back();
  part.leader_id = 1;
  part.leader_epoch = 0;
  part.replica_nodes = {1};
  part.isr_nodes = {1};
  part.eligible_leader_replicas.emplace();
  part.last_known_elr.emplace();

  Bytes wire = {0, 0, 0, 0,  // ThrottleTimeMs
                0x02,        // one topic
                0, 0,        // ErrorCode
                0x02, 't'};  // Name
  wire.insert(wire.end(), 16, 0);  // TopicId: zero
  const Bytes rest = {0x00,                    // IsInternal
                      0x02,                    // one partition
                      0, 0,                    // ErrorCode
                      0, 0, 0, 0,              // PartitionIndex
                      0, 0, 0, 1,              // LeaderId
                      0, 0, 0, 0,              // LeaderEpoch
                      0x02, 0, 0, 0, 1,        // ReplicaNodes [1]
                      0x02, 0, 0, 0, 1,        // IsrNodes [1]
                      0x01,                    // EligibleLeaderReplicas []
                      0x01,                    // LastKnownElr []
                      0x01,                    // OfflineReplicas []
                      0x00,                    // partition tags
                      0x00, 0x00, 0x0d, 0xf8,  // TopicAuthorizedOperations
                      0x00,                    // topic tags
                      0xff,                    // NextCursor null
                      0x00};                   // tags
  wire.insert(wire.end(), rest.begin(), rest.end());
  REQUIRE(encode(resp) == wire);

  REQUIRE(decode_all<DescribeTopicPartitionsResponse>(wire) == resp);

  // Null ELR lists (what the schema allows, and Runnel never sends) are compact nulls.
  part.eligible_leader_replicas.reset();
  part.last_known_elr.reset();
  Bytes nulls = encode(resp);
  const size_t elr_at = 9 + 16 + 1 + 1 + 2 + 4 + 4 + 4 + 5 + 5;
  REQUIRE(nulls[elr_at] == 0x00);
  REQUIRE(nulls[elr_at + 1] == 0x00);
}
