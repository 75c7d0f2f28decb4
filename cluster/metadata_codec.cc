#include "cluster/metadata_codec.h"

#include <boost/json.hpp>

#include "storage/uuid_text.h"

namespace runnel::cluster {

namespace json = boost::json;

namespace {

json::array node_list(const std::vector<NodeId>& ids) {
  json::array a;
  for (auto id : ids) a.push_back(id.value());
  return a;
}

// Reads a JSON document; the `read` callback may throw for a wrong shape
// (boost::json's at() and as_*() do), which becomes the error message.
template <typename T, typename F>
Decoded<T> parse(const std::string& text, F read) {
  try {
    return read(json::parse(text).as_object());
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

std::vector<NodeId> read_nodes(const json::value& v) {
  std::vector<NodeId> out;
  for (const auto& n : v.as_array()) out.push_back(NodeId(static_cast<int32_t>(n.as_int64())));
  return out;
}

}  // namespace

std::string encode_topic(const TopicRecord& t) {
  json::object configs;
  for (const auto& [k, v] : t.configs) configs[k] = v;
  json::object o{{"name", t.name},
                 {"id", storage::uuid_to_base64(t.id)},
                 {"partitions", static_cast<int64_t>(t.partitions)},
                 {"configs", configs}};
  if (!t.assignment.empty()) {
    json::array assignment;
    for (const auto& replicas : t.assignment) assignment.push_back(node_list(replicas));
    o["assignment"] = std::move(assignment);
  }
  return json::serialize(o);
}

std::string encode_topic(const TopicImage& t) {
  TopicRecord r{t.name, t.id, static_cast<int32_t>(t.partitions.size()), t.configs, {}};
  // A partition with a key of its own ignores its entry; one without is
  // still in the state its replicas were created in.
  for (const auto& p : t.partitions) r.assignment.push_back(p.replicas);
  return encode_topic(r);
}

Decoded<TopicRecord> decode_topic(const std::string& text) {
  return parse<TopicRecord>(text, [](const json::object& o) -> Decoded<TopicRecord> {
    TopicRecord r;
    r.name = json::value_to<std::string>(o.at("name"));
    auto id = storage::uuid_from_base64(json::value_to<std::string>(o.at("id")));
    if (!id) return std::string("topic " + r.name + " has no valid id");
    r.id = *id;
    int64_t count = o.at("partitions").as_int64();
    if (count < 0 || count > INT32_MAX) return std::string("topic " + r.name + " has a bad partition count");
    r.partitions = static_cast<int32_t>(count);
    for (const auto& [k, v] : o.at("configs").as_object()) r.configs[std::string(k)] = json::value_to<std::string>(v);
    if (auto* a = o.if_contains("assignment")) {
      for (const auto& replicas : a->as_array()) {
        r.assignment.push_back(read_nodes(replicas));
        if (r.assignment.back().empty()) return std::string("topic " + r.name + " has a partition without replicas");
      }
      if (r.assignment.size() != static_cast<size_t>(r.partitions))
        return std::string("topic " + r.name + " assigns " + std::to_string(r.assignment.size()) + " of its " +
                           std::to_string(r.partitions) + " partitions");
    }
    return r;
  });
}

std::string encode_partition(const PartitionRegistration& p) {
  json::object o{{"replicas", node_list(p.replicas)},
                 {"isr", node_list(p.isr)},
                 {"leader", p.leader.value()},
                 {"leader_epoch", p.leader_epoch.value()},
                 {"partition_epoch", p.partition_epoch}};
  // Only while a reassignment runs, so a partition that never moved keeps
  // the bytes it had before these fields existed.
  if (!p.adding_replicas.empty()) o["adding_replicas"] = node_list(p.adding_replicas);
  if (!p.removing_replicas.empty()) o["removing_replicas"] = node_list(p.removing_replicas);
  return json::serialize(o);
}

Decoded<PartitionRegistration> decode_partition(const std::string& text) {
  return parse<PartitionRegistration>(text, [](const json::object& o) -> Decoded<PartitionRegistration> {
    PartitionRegistration p;
    p.replicas = read_nodes(o.at("replicas"));
    p.isr = read_nodes(o.at("isr"));
    p.leader = NodeId(static_cast<int32_t>(o.at("leader").as_int64()));
    p.leader_epoch = LeaderEpoch(static_cast<int32_t>(o.at("leader_epoch").as_int64()));
    p.partition_epoch = static_cast<int32_t>(o.at("partition_epoch").as_int64());
    if (auto* a = o.if_contains("adding_replicas")) p.adding_replicas = read_nodes(*a);
    if (auto* r = o.if_contains("removing_replicas")) p.removing_replicas = read_nodes(*r);
    if (p.replicas.empty()) return std::string("a partition without replicas");
    if (p.has_leader() && !p.is_replica(p.leader)) return std::string("a leader that is not a replica");
    return p;
  });
}

std::string encode_broker(const BrokerRegistration& b) {
  json::array endpoints;
  for (const auto& e : b.endpoints)
    endpoints.push_back(json::object{
        {"listener", e.listener}, {"security_protocol", e.security_protocol}, {"host", e.host}, {"port", e.port}});
  // No epoch: it is the key's create revision, known only once written.
  json::object o{{"id", b.id.value()}, {"endpoints", endpoints}, {"fenced", b.fenced}};
  if (b.rack) o["rack"] = *b.rack;
  return json::serialize(o);
}

Decoded<BrokerRegistration> decode_broker(const std::string& text) {
  return parse<BrokerRegistration>(text, [](const json::object& o) -> Decoded<BrokerRegistration> {
    BrokerRegistration b;
    b.id = NodeId(static_cast<int32_t>(o.at("id").as_int64()));
    for (const auto& ev : o.at("endpoints").as_array()) {
      const auto& e = ev.as_object();
      int64_t port = e.at("port").as_int64();
      if (port <= 0 || port > 65535) return std::string("an endpoint with a bad port");
      b.endpoints.push_back({json::value_to<std::string>(e.at("listener")),
                             json::value_to<std::string>(e.at("security_protocol")),
                             json::value_to<std::string>(e.at("host")), static_cast<uint16_t>(port)});
    }
    if (auto* r = o.if_contains("rack")) b.rack = json::value_to<std::string>(*r);
    if (auto* f = o.if_contains("fenced")) b.fenced = f->as_bool();
    return b;
  });
}

std::string encode_controller(NodeId id) { return json::serialize(json::object{{"id", id.value()}}); }

Decoded<NodeId> decode_controller(const std::string& text) {
  return parse<NodeId>(text, [](const json::object& o) -> Decoded<NodeId> {
    return NodeId(static_cast<int32_t>(o.at("id").as_int64()));
  });
}

}  // namespace runnel::cluster
