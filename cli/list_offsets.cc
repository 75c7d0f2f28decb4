#include "cli/list_offsets.h"

#include "protocol/messages/02_list_offsets.h"

namespace runnel::cli {

using namespace protocol;

std::map<int32_t, int64_t> list_offsets(Cluster& cluster, const std::string& topic,
                                        const std::vector<int32_t>& partitions, int64_t timestamp,
                                        int8_t isolation_level) {
  std::map<int32_t, int64_t> out;
  for (int32_t p : partitions) {
    out[p] = cluster.with_retries([&] {
      auto& conn = cluster.leader(topic, p);
      ListOffsetsRequest req;
      req.replica_id = -1;
      req.isolation_level = isolation_level;
      req.timeout_ms = static_cast<int32_t>(cluster.config().request_timeout().count());
      ListOffsetsRequest::ListOffsetsTopic t;
      t.name = topic;
      ListOffsetsRequest::ListOffsetsTopic::ListOffsetsPartition lp;
      lp.partition_index = p;
      lp.timestamp = timestamp;
      t.partitions.push_back(lp);
      req.topics.push_back(t);
      auto resp = conn.call<ListOffsetsApi>(req, conn.version<ListOffsetsApi>());
      for (const auto& rt : resp.topics)
        for (const auto& rp : rt.partitions)
          if (rp.partition_index == p) {
            check(rp.error_code, "ListOffsets for " + topic + "/" + std::to_string(p));
            return rp.offset;
          }
      throw KafkaError(3, "ListOffsets for " + topic + "/" + std::to_string(p), "no answer for the partition");
    });
  }
  return out;
}

}  // namespace runnel::cli
