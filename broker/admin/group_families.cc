#include <array>
#include <string>

#include "broker/admin/metric_families.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"

namespace runnel::broker::admin {

namespace {

using group::Group;
using group::GroupState;

// Kafka's GroupMetadataManager gauges: NumGroups and one a state.
void group_counts(PrometheusText& out, const group::GroupCoordinator& coordinator) {
  std::array<uint64_t, 5> by_state{};
  uint64_t all = 0;
  coordinator.for_each_group([&](const Group& g) {
    ++all;
    ++by_state[static_cast<size_t>(g.state)];
  });
  struct Family {
    const char* name;
    GroupState state;
  };
  static constexpr Family families[] = {
      {"kafka_coordinator_group_groupmetadatamanager_numgroupsempty", GroupState::empty},
      {"kafka_coordinator_group_groupmetadatamanager_numgroupspreparingrebalance", GroupState::preparing_rebalance},
      {"kafka_coordinator_group_groupmetadatamanager_numgroupscompletingrebalance",
       GroupState::completing_rebalance},
      {"kafka_coordinator_group_groupmetadatamanager_numgroupsstable", GroupState::stable},
      {"kafka_coordinator_group_groupmetadatamanager_numgroupsdead", GroupState::dead},
  };
  const char* total = "kafka_coordinator_group_groupmetadatamanager_numgroups";
  out.family(total, "gauge", "Groups this broker coordinates");
  out.sample(total, {}, all);
  for (const auto& f : families) {
    const std::string help = std::string("Groups this broker coordinates in state ") + group::state_name(f.state);
    out.family(f.name, "gauge", help);
    out.sample(f.name, {}, by_state[static_cast<size_t>(f.state)]);
  }
}

// Committed offsets and lag per group and partition, named as
// kafka_exporter names them (Kafka's broker has no such metric: users run
// an exporter that asks ListOffsets and OffsetFetch). The lag is the high
// watermark of this broker's replica of the partition minus the committed
// offset; a partition with no replica here has its offset and no lag.
void group_offsets(PrometheusText& out, const group::GroupCoordinator& coordinator, const TopicPartitions& topics) {
  const char* current = "kafka_consumergroup_current_offset";
  const char* lag = "kafka_consumergroup_lag";
  struct Row {
    std::string group, topic, partition;
    int64_t offset;
    std::optional<int64_t> lag;
  };
  std::vector<Row> rows;
  coordinator.for_each_group([&](const Group& g) {
    for (const auto& [tp, committed] : g.offsets) {
      Row row{g.id, tp.first, std::to_string(tp.second), committed.offset, std::nullopt};
      if (auto t = topics.find(tp.first); t != topics.end())
        for (const auto& p : t->second)
          if (p->index() == tp.second) row.lag = std::max<int64_t>(0, p->high_watermark().value() - committed.offset);
      rows.push_back(std::move(row));
    }
  });
  out.family(current, "gauge", "The group's committed offset of the partition");
  for (const auto& r : rows)
    out.sample(current, {{"consumergroup", r.group}, {"topic", r.topic}, {"partition", r.partition}}, r.offset);
  out.family(lag, "gauge", "The partition's high watermark minus the group's committed offset");
  for (const auto& r : rows)
    if (r.lag) out.sample(lag, {{"consumergroup", r.group}, {"topic", r.topic}, {"partition", r.partition}}, *r.lag);
}

}  // namespace

void group_families(PrometheusText& out, Broker& broker, const TopicPartitions& topics) {
  const group::GroupCoordinator& coordinator = broker.groups().coordinator();
  group_counts(out, coordinator);
  group_offsets(out, coordinator, topics);
}

}  // namespace runnel::broker::admin
