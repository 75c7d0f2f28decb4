#include "cli/group_offsets.h"

#include "protocol/messages/08_offset_commit.h"
#include "protocol/messages/09_offset_fetch.h"

namespace runnel::cli {

using namespace protocol;

namespace {

// topic -> partitions, the shape both requests want.
std::map<std::string, std::vector<int32_t>> by_topic(const std::vector<TopicPartition>& tps) {
  std::map<std::string, std::vector<int32_t>> out;
  for (const auto& [t, p] : tps) out[t].push_back(p);
  return out;
}

}  // namespace

std::map<TopicPartition, int64_t> fetch_committed(Cluster& cluster, const std::string& group_id,
                                                  const std::optional<std::vector<TopicPartition>>& partitions) {
  return cluster.with_retries([&] {
    auto& conn = cluster.coordinator(group_id);
    // v10 names topics by id; v8 and v9 batch groups.
    int16_t v = conn.version<OffsetFetchApi>(9);
    OffsetFetchRequest req;
    std::map<TopicPartition, int64_t> out;
    std::string what = "OffsetFetch for group '" + group_id + "'";
    auto take = [&](const std::string& topic, int32_t p, int64_t offset, int16_t error) {
      check(error, what + " " + topic + "/" + std::to_string(p));
      if (offset >= 0) out[{topic, p}] = offset;
    };
    if (v >= 8) {
      OffsetFetchRequest::OffsetFetchRequestGroup g;
      g.group_id = group_id;
      if (partitions) {
        g.topics.emplace();
        for (const auto& [t, ps] : by_topic(*partitions)) {
          OffsetFetchRequest::OffsetFetchRequestGroup::OffsetFetchRequestTopics rt;
          rt.name = t;
          rt.partition_indexes = ps;
          g.topics->push_back(rt);
        }
      } else {
        g.topics = std::nullopt;
      }
      req.groups.push_back(g);
      auto resp = conn.call<OffsetFetchApi>(req, v);
      for (const auto& rg : resp.groups) {
        check(rg.error_code, what);
        for (const auto& t : rg.topics)
          for (const auto& p : t.partitions) take(t.name, p.partition_index, p.committed_offset, p.error_code);
      }
    } else {
      req.group_id = group_id;
      if (partitions) {
        req.topics.emplace();
        for (const auto& [t, ps] : by_topic(*partitions)) {
          OffsetFetchRequest::OffsetFetchRequestTopic rt;
          rt.name = t;
          rt.partition_indexes = ps;
          req.topics->push_back(rt);
        }
      } else {
        req.topics = std::nullopt;
      }
      auto resp = conn.call<OffsetFetchApi>(req, v);
      check(resp.error_code, what);
      for (const auto& t : resp.topics)
        for (const auto& p : t.partitions) take(t.name, p.partition_index, p.committed_offset, p.error_code);
    }
    return out;
  });
}

void commit_offsets(Cluster& cluster, const std::string& group_id, const GenerationInfo& generation,
                    const std::map<TopicPartition, int64_t>& offsets) {
  if (offsets.empty()) return;
  cluster.with_retries([&] {
    auto& conn = cluster.coordinator(group_id);
    OffsetCommitRequest req;
    req.group_id = group_id;
    req.generation_id_or_member_epoch = generation.generation_id;
    req.member_id = generation.member_id;
    std::map<std::string, std::vector<std::pair<int32_t, int64_t>>> topics;
    for (const auto& [tp, off] : offsets) topics[tp.first].emplace_back(tp.second, off);
    for (const auto& [t, ps] : topics) {
      OffsetCommitRequest::OffsetCommitRequestTopic rt;
      rt.name = t;
      for (const auto& [p, off] : ps) {
        OffsetCommitRequest::OffsetCommitRequestTopic::OffsetCommitRequestPartition rp;
        rp.partition_index = p;
        rp.committed_offset = off;
        rp.committed_metadata = "";
        rt.partitions.push_back(rp);
      }
      req.topics.push_back(rt);
    }
    // v10 names topics by id.
    auto resp = conn.call<OffsetCommitApi>(req, conn.version<OffsetCommitApi>(9));
    for (const auto& t : resp.topics)
      for (const auto& p : t.partitions)
        check(p.error_code, "OffsetCommit for group '" + group_id + "' " + t.name + "/" + std::to_string(p.partition_index));
    return 0;
  });
}

}  // namespace runnel::cli
