#include "broker/admin/status_json.h"

#include <boost/json.hpp>

#include "broker/advertised_controller.h"
#include "broker/broker.h"
#include "storage/uuid_text.h"

namespace runnel::broker::admin {

namespace json = boost::json;

namespace {

constexpr std::string_view kPartitionsPrefix = "/v1/partitions/";

json::array node_ids(const std::vector<NodeId>& ids) {
  json::array out;
  for (NodeId n : ids) out.push_back(n.value());
  return out;
}

std::string brokers(Broker& broker) {
  const cluster::ImagePtr image = broker.metadata_cache().image();
  const NodeId controller = advertised_controller(*image, NodeId(broker.node_id()));
  json::array out;
  for (const auto& [id, reg] : image->brokers()) {
    json::array endpoints;
    for (const auto& e : reg.endpoints)
      endpoints.push_back({{"listener", e.listener},
                           {"security_protocol", e.security_protocol},
                           {"host", e.host},
                           {"port", e.port}});
    json::object b{{"node_id", id.value()},
                   {"rack", reg.rack ? json::value(*reg.rack) : json::value(nullptr)},
                   {"fenced", reg.fenced},
                   {"alive", image->is_live(id)},
                   {"is_controller", id == controller},
                   {"endpoints", std::move(endpoints)}};
    out.push_back(std::move(b));
  }
  return json::serialize(out);
}

std::string topics(Broker& broker) {
  const cluster::ImagePtr image = broker.metadata_cache().image();
  json::array out;
  for (const auto& [name, topic] : image->topics()) {
    json::object configs;
    for (const auto& [k, v] : topic->configs) configs[k] = v;
    const size_t rf = topic->partitions.empty() ? 0 : topic->partitions.front().replicas.size();
    out.push_back({{"name", name},
                   {"topic_id", storage::uuid_to_base64(topic->id)},
                   {"internal", topic->internal},
                   {"partitions", topic->partitions.size()},
                   {"replication_factor", rf},
                   {"configs", std::move(configs)}});
  }
  return json::serialize(out);
}

std::optional<std::string> partitions(Broker& broker, const std::string& name) {
  const cluster::ImagePtr image = broker.metadata_cache().image();
  const cluster::TopicPtr topic = image->topic(name);
  if (!topic) return std::nullopt;
  json::array out;
  for (size_t i = 0; i < topic->partitions.size(); ++i) {
    const auto& reg = topic->partitions[i];
    const auto index = static_cast<int32_t>(i);
    json::object p{{"partition", index},
                   {"leader", reg.leader.value()},
                   {"leader_epoch", reg.leader_epoch.value()},
                   {"replicas", node_ids(reg.replicas)},
                   {"isr", node_ids(reg.isr)}};
    if (auto local = broker.replica_manager().get_partition(name, PartitionId(index))) {
      p["log_start_offset"] = local->log_start_offset().value();
      p["high_watermark"] = local->high_watermark().value();
      p["last_stable_offset"] = local->last_stable_offset().value();
      p["log_end_offset"] = local->log_end_offset().value();
      p["size"] = local->log().size_bytes();
    }
    out.push_back(std::move(p));
  }
  return json::serialize(out);
}

}  // namespace

std::optional<JsonAnswer> status_json(Broker& broker, std::string_view path) {
  if (path == "/v1/brokers") return JsonAnswer{200, brokers(broker)};
  if (path == "/v1/topics") return JsonAnswer{200, topics(broker)};
  if (path.starts_with(kPartitionsPrefix) && path.size() > kPartitionsPrefix.size()) {
    const std::string name(path.substr(kPartitionsPrefix.size()));
    if (auto body = partitions(broker, name)) return JsonAnswer{200, std::move(*body)};
    json::object error{{"error_code", 404}, {"message", "Topic " + name + " not found"}};
    return JsonAnswer{404, json::serialize(error)};
  }
  return std::nullopt;
}

}  // namespace runnel::broker::admin
