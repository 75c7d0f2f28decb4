// TopicTable's runnel-topics.json: the topic front end writes it from the
// blocking pool, so two writes may finish in either order; the newer
// snapshot of the table must be the one left on disk.
#include <catch2/catch.hpp>

#include "broker/topic_table.h"
#include "storage/test_util.h"

using namespace runnel::broker;
using namespace runnel::storage::testing;
namespace storage = runnel::storage;

namespace {

std::unique_ptr<storage::LogManager> open_logs(const TempDir& dir) {
  storage::LogManagerOptions o;
  o.log_dirs = {dir.path};
  o.cluster_id = "MkU3OEVBNTcwNTJENDM2Qk";
  o.node_id = 1;
  auto logs = storage::LogManager::open(std::move(o));
  REQUIRE(logs);
  return std::move(*logs);
}

}  // namespace

TEST_CASE("runnel-topics.json: the newest snapshot wins whatever order its writes finish in", "[topic_table]") {
  TempDir dir;
  auto config = BrokerConfig::from({{"node.id", "1"}, {"log.dirs", dir.path.string()}});
  auto logs = open_logs(dir);
  TopicTable table(config, *logs);
  table.publish(table.new_topic("first", {}, false));
  auto older = table.snapshot();
  table.publish(table.new_topic("second", {}, false));
  auto newer = table.snapshot();
  REQUIRE(newer.generation > older.generation);

  REQUIRE_FALSE(table.write(newer));
  REQUIRE_FALSE(table.write(older));  // finished last, written first: skipped

  TopicTable reloaded(config, *logs);
  REQUIRE_FALSE(reloaded.load());
  REQUIRE(reloaded.find("first"));
  REQUIRE(reloaded.find("second"));
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
