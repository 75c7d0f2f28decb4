// TopicTable: its records in the metadata store, and reserved names.
#include <catch2/catch.hpp>

#include "broker/topic_table.h"
#include "storage/test_util.h"
#include "storage/uuid_text.h"

using namespace runnel::broker;
using namespace runnel::storage::testing;
namespace storage = runnel::storage;

namespace {

std::unique_ptr<storage::LogManager> open_logs(const TempDir& dir) { return open_log_manager(dir.path); }

}  // namespace

TEST_CASE("a topic's record in the metadata store reloads as the same topic", "[topic_table]") {
  TempDir dir;
  auto config = BrokerConfig::from({{"node.id", "1"}, {"log.dirs", dir.path.string()}});
  auto logs = open_logs(dir);
  TopicTable table(config, *logs);
  auto created = table.create("orders", 2, {{"cleanup.policy", "compact"}});
  REQUIRE(created);
  const std::string record = TopicTable::record(**created);
  REQUIRE(record == R"({"name":"orders","id":")" + storage::uuid_to_base64((*created)->id) +
                        R"(","partitions":2,"configs":{"cleanup.policy":"compact"}})");

  TopicTable reloaded(config, *logs);
  REQUIRE_FALSE(reloaded.load({runnel::cluster::KeyValue{"topics/orders", record, 1, 1, runnel::cluster::kNoLease}}));
  auto topic = reloaded.find("orders");
  REQUIRE(topic);
  REQUIRE(topic->id == (*created)->id);
  REQUIRE(topic->partitions.size() == 2);
  REQUIRE(topic->overrides.at("cleanup.policy") == "compact");
  REQUIRE(reloaded.find((*created)->id));

  TopicTable broken(config, *logs);
  REQUIRE(broken.load({runnel::cluster::KeyValue{"topics/x", "{not json", 1, 1, runnel::cluster::kNoLease}}));
}

TEST_CASE("a reserved name is neither created again nor published", "[topic_table]") {
  TempDir dir;
  auto config = BrokerConfig::from({{"node.id", "1"}, {"log.dirs", dir.path.string()}});
  auto logs = open_logs(dir);
  TopicTable table(config, *logs);
  table.reserve("busy");
  REQUIRE_FALSE(table.create("busy", 1, {}));
  REQUIRE_FALSE(table.find("busy"));
  REQUIRE(logs->partitions().empty());
  table.release("busy");
  auto created = table.create("busy", 2, {});
  REQUIRE(created);
  REQUIRE((*created)->partitions.size() == 2);
  REQUIRE(table.find("busy"));
}
