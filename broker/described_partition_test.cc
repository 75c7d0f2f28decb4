// describe_partition: the leader Metadata and DescribeTopicPartitions name
// is one of the live brokers Metadata lists, else none. Between a leader's
// registration lapsing and the controller's re-election the image still has
// it as leader; a client told so (kafkajs) fetches the partition from no
// broker until it next refreshes its metadata.
#include <catch2/catch.hpp>

#include "broker/described_partition.h"
#include "cluster/metadata_cache.h"
#include "cluster/testing/node_ids.h"
#include "cluster/testing/registrations.h"
#include "replication/replica_manager.h"

using namespace runnel;
using runnel::broker::describe_partition;
using runnel::cluster::MetadataImage;
using runnel::cluster::PartitionRegistration;
using runnel::cluster::TopicImage;
using runnel::cluster::testing::ids;
using runnel::cluster::testing::registered;

namespace {

// "t"-0 on brokers 1, 2 and 3, all in sync, led by 1 at leader epoch 4.
TopicImage led_by_1() {
  PartitionRegistration p;
  p.replicas = ids({1, 2, 3});
  p.isr = p.replicas;
  p.leader = NodeId(1);
  p.leader_epoch = LeaderEpoch(4);
  TopicImage t;
  t.name = "t";
  t.partitions.push_back(p);
  return t;
}

struct Fixture {
  broker::asio::io_context io;
  cluster::MetadataCache cache;
  replication::ReplicaManager replicas{io.get_executor(), cache, NodeId(2)};  // hosts nothing

  broker::DescribedPartition describe(const MetadataImage& image) {
    const TopicImage& t = *image.topic("t");
    return describe_partition(t, PartitionId(0), image, replicas);
  }
};

const MetadataImage kBrokers23 = MetadataImage().with_broker(registered(2)).with_broker(registered(3));

}  // namespace

TEST_CASE("a live leader is named", "[described_partition]") {
  Fixture f;
  auto d = f.describe(kBrokers23.with_broker(registered(1)).with_topic(led_by_1()));
  CHECK(d.leader_id == 1);
  CHECK(d.leader_epoch == 4);
  CHECK(d.offline_replicas.empty());
  CHECK_FALSE(d.log_dir_offline);
}

TEST_CASE("a leader no longer registered is no leader until the controller re-elects", "[described_partition]") {
  Fixture f;
  auto d = f.describe(kBrokers23.with_topic(led_by_1()));
  CHECK(d.leader_id == -1);
  CHECK(d.leader_epoch == 4);
  CHECK(d.replica_nodes == std::vector<int32_t>{1, 2, 3});
  CHECK(d.isr_nodes == std::vector<int32_t>{1, 2, 3});
  CHECK(d.offline_replicas == std::vector<int32_t>{1});
  CHECK_FALSE(d.log_dir_offline);
}

TEST_CASE("a fenced leader is no leader", "[described_partition]") {
  Fixture f;
  auto d = f.describe(kBrokers23.with_broker(registered(1, true)).with_topic(led_by_1()));
  CHECK(d.leader_id == -1);
  CHECK(d.offline_replicas == std::vector<int32_t>{1});
}
