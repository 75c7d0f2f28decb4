// `runnel topic create|list|describe|alter-config|add-partitions|delete`:
// CreateTopics, Metadata + DescribeConfigs, IncrementalAlterConfigs,
// CreatePartitions and DeleteTopics, sent where Kafka's admin client sends
// them (the controller Metadata names; any broker forwards in KRaft).
#include <cstdio>

#include "cli/cluster.h"
#include "cli/command.h"
#include "cli/kafka_errors.h"
#include "cli/table.h"
#include "protocol/messages/19_create_topics.h"
#include "protocol/messages/20_delete_topics.h"
#include "protocol/messages/32_describe_configs.h"
#include "protocol/messages/37_create_partitions.h"
#include "protocol/messages/44_incremental_alter_configs.h"

namespace runnel::cli {

namespace json = boost::json;
using namespace protocol;

namespace {

constexpr int8_t kTopicResource = 2;  // ConfigResource.Type.TOPIC

constexpr OptionSpec kOutputOption{'o', "output", "text|json", "output format (default text)"};

int32_t timeout_ms(const Cluster& c) { return static_cast<int32_t>(c.config().request_timeout().count()); }

// ConfigEntry.ConfigSource as Kafka's tools print it.
const char* config_source_name(int8_t source) {
  switch (source) {
    case 1: return "DYNAMIC_TOPIC_CONFIG";
    case 2: return "DYNAMIC_BROKER_CONFIG";
    case 3: return "DYNAMIC_DEFAULT_BROKER_CONFIG";
    case 4: return "STATIC_BROKER_CONFIG";
    case 5: return "DEFAULT_CONFIG";
    case 6: return "DYNAMIC_BROKER_LOGGER_CONFIG";
    default: return "UNKNOWN";
  }
}

int create(const std::vector<std::string>& argv) {
  static const char* usage = "runnel topic create NAME [-p PARTITIONS] [-r REPLICATION] [-c key=value ...]";
  auto args = parse_command({{'p', "partitions", "N", "partition count (default: the broker's num.partitions)"},
                             {'r', "replication", "N", "replication factor (default: the broker's default.replication.factor)"},
                             {'c', "topic-config", "KEY=VALUE", "topic config, repeatable (retention.ms=..., cleanup.policy=...)"},
                             {0, "if-not-exists", nullptr, "succeed when the topic already exists"},
                             {0, "dry-run", nullptr, "let the controller validate only (ValidateOnly)"}},
                            argv, usage, "Creates a topic (CreateTopics).");
  std::string name = one_positional(args, "topic name", usage);
  Cluster cluster(ClientConfig::from(args));
  CreateTopicsRequest req;
  CreateTopicsRequest::CreatableTopic t;
  t.name = name;
  t.num_partitions = static_cast<int32_t>(args.get_int("partitions").value_or(-1));
  t.replication_factor = static_cast<int16_t>(args.get_int("replication").value_or(-1));
  for (const auto& kv : args.all("topic-config")) {
    auto [k, v] = split_key_value(kv, "-c");
    CreateTopicsRequest::CreatableTopic::CreatableTopicConfig c;
    c.name = k;
    c.value = v;
    t.configs.push_back(c);
  }
  req.topics.push_back(t);
  req.timeout_ms = timeout_ms(cluster);
  req.validate_only = args.has("dry-run");
  auto resp = cluster.with_retries([&] {
    auto& conn = cluster.controller();
    auto r = conn.call<CreateTopicsApi>(req, conn.version<CreateTopicsApi>());
    for (const auto& res : r.topics)
      if (is_retriable(res.error_code)) throw KafkaError(res.error_code, "CreateTopics", res.error_message.value_or(""));
    return r;
  });
  for (const auto& res : resp.topics) {
    if (res.error_code == 36 && args.has("if-not-exists")) {
      std::printf("topic %s already exists\n", res.name.c_str());
      continue;
    }
    check(res.error_code, "creating topic '" + res.name + "'", res.error_message.value_or(""));
    std::printf("%s topic %s (%d partitions, replication factor %d)\n", req.validate_only ? "validated" : "created",
                res.name.c_str(), res.num_partitions, res.replication_factor);
  }
  return kExitOk;
}

int list(const std::vector<std::string>& argv) {
  static const char* usage = "runnel topic list [-i] [-o json]";
  auto args = parse_command({{'i', "internal", nullptr, "include internal topics (__consumer_offsets, ...)"}, kOutputOption},
                            argv, usage, "Lists topics (Metadata).");
  bool as_json = wants_json(args.get("output"));
  Cluster cluster(ClientConfig::from(args));
  auto md = cluster.with_retries([&] { return cluster.metadata(std::nullopt); });
  Table table({"TOPIC", "PARTITIONS", "REPLICATION"});
  json::array out;
  for (const auto& [name, t] : md.topics) {
    if (t.internal && !args.has("internal")) continue;
    size_t rf = t.partitions.empty() ? 0 : t.partitions.front().replicas.size();
    table.add({name, std::to_string(t.partitions.size()), std::to_string(rf)});
    out.push_back(json::object{{"name", name},
                               {"partitions", t.partitions.size()},
                               {"replication_factor", rf},
                               {"internal", t.internal}});
  }
  if (as_json)
    print_json(out);
  else
    std::fputs(table.render().c_str(), stdout);
  return kExitOk;
}

struct ConfigEntry {
  std::string name;
  std::optional<std::string> value;
  int8_t source = -1;
  bool sensitive = false;
};

std::vector<ConfigEntry> topic_configs(Cluster& cluster, const std::string& topic) {
  DescribeConfigsRequest req;
  DescribeConfigsRequest::DescribeConfigsResource r;
  r.resource_type = kTopicResource;
  r.resource_name = topic;
  r.configuration_keys = std::nullopt;
  req.resources.push_back(r);
  auto resp = cluster.with_retries([&] {
    auto& conn = cluster.any();
    return conn.call<DescribeConfigsApi>(req, conn.version<DescribeConfigsApi>());
  });
  std::vector<ConfigEntry> out;
  for (const auto& res : resp.results) {
    check(res.error_code, "DescribeConfigs for topic '" + topic + "'", res.error_message.value_or(""));
    for (const auto& c : res.configs) out.push_back({c.name, c.value, c.config_source, c.is_sensitive});
  }
  return out;
}

int describe(const std::vector<std::string>& argv) {
  static const char* usage = "runnel topic describe [NAME ...] [--all-configs] [-o json]";
  auto args = parse_command({{'a', "all-configs", nullptr, "list every config, not only those set on the topic"}, kOutputOption},
                            argv, usage,
                            "Describes topics: partitions (leader, replicas, ISR) and configs set on the topic. "
                            "Without NAME, every topic that is not internal.");
  bool as_json = wants_json(args.get("output"));
  Cluster cluster(ClientConfig::from(args));
  std::optional<std::vector<std::string>> names;
  if (!args.positionals().empty()) names = args.positionals();
  auto md = cluster.with_retries([&] { return cluster.metadata(names); });
  json::array out;
  bool first = true;
  for (const auto& [name, t] : md.topics) {
    if (!names && t.internal) continue;
    check(t.error_code, "topic '" + name + "'");
    auto configs = topic_configs(cluster, name);
    size_t rf = t.partitions.empty() ? 0 : t.partitions.front().replicas.size();
    Table parts({"PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR", "OFFLINE"});
    json::array jparts;
    for (const auto& p : t.partitions) {
      parts.add({std::to_string(p.partition), p.leader < 0 ? "none" : std::to_string(p.leader),
                 std::to_string(p.leader_epoch), join_ints(p.replicas), join_ints(p.isr), join_ints(p.offline)});
      jparts.push_back(json::object{{"partition", p.partition},
                                    {"leader", p.leader},
                                    {"leader_epoch", p.leader_epoch},
                                    {"replicas", json::value_from(p.replicas)},
                                    {"isr", json::value_from(p.isr)},
                                    {"offline_replicas", json::value_from(p.offline)},
                                    {"error", p.error_code ? error_name(p.error_code) : ""}});
    }
    Table cfg({"CONFIG", "VALUE", "SOURCE"});
    json::object jcfg;
    for (const auto& c : configs) {
      if (!args.has("all-configs") && c.source != 1) continue;
      std::string value = c.sensitive ? "(sensitive)" : c.value.value_or("null");
      cfg.add({c.name, value, config_source_name(c.source)});
      jcfg[c.name] = c.sensitive || !c.value ? json::value(nullptr) : json::value(*c.value);
    }
    if (as_json) {
      out.push_back(json::object{{"name", name},
                                 {"internal", t.internal},
                                 {"partition_count", t.partitions.size()},
                                 {"replication_factor", rf},
                                 {"partitions", jparts},
                                 {"configs", jcfg}});
      continue;
    }
    if (!first) std::printf("\n");
    first = false;
    std::printf("TOPIC %s  PARTITIONS %zu  REPLICATION %zu%s\n", name.c_str(), t.partitions.size(), rf,
                t.internal ? "  INTERNAL" : "");
    std::fputs(parts.render().c_str(), stdout);
    if (!cfg.empty()) {
      std::printf("\n");
      std::fputs(cfg.render().c_str(), stdout);
    }
  }
  if (as_json) print_json(out);
  return kExitOk;
}

int alter_config(const std::vector<std::string>& argv) {
  static const char* usage = "runnel topic alter-config NAME [--set key=value ...] [--delete key ...]";
  auto args = parse_command({{0, "set", "KEY=VALUE", "set a topic config, repeatable"},
                             {0, "delete", "KEY", "remove a topic config (back to the broker default), repeatable"},
                             {0, "dry-run", nullptr, "validate only"}},
                            argv, usage, "Changes topic configs (IncrementalAlterConfigs).");
  std::string name = one_positional(args, "topic name", usage);
  if (!args.has("set") && !args.has("delete")) throw UsageError("nothing to change: give --set or --delete");
  Cluster cluster(ClientConfig::from(args));
  IncrementalAlterConfigsRequest req;
  IncrementalAlterConfigsRequest::AlterConfigsResource r;
  r.resource_type = kTopicResource;
  r.resource_name = name;
  for (const auto& kv : args.all("set")) {
    auto [k, v] = split_key_value(kv, "--set");
    IncrementalAlterConfigsRequest::AlterConfigsResource::AlterableConfig c;
    c.name = k;
    c.config_operation = 0;  // SET
    c.value = v;
    r.configs.push_back(c);
  }
  for (const auto& k : args.all("delete")) {
    IncrementalAlterConfigsRequest::AlterConfigsResource::AlterableConfig c;
    c.name = k;
    c.config_operation = 1;  // DELETE
    c.value = std::nullopt;
    r.configs.push_back(c);
  }
  req.resources.push_back(r);
  req.validate_only = args.has("dry-run");
  auto resp = cluster.with_retries([&] {
    auto& conn = cluster.controller();
    return conn.call<IncrementalAlterConfigsApi>(req, conn.version<IncrementalAlterConfigsApi>());
  });
  for (const auto& res : resp.responses)
    check(res.error_code, "altering configs of topic '" + name + "'", res.error_message.value_or(""));
  std::printf("%s configs of topic %s\n", req.validate_only ? "validated" : "altered", name.c_str());
  return kExitOk;
}

int add_partitions(const std::vector<std::string>& argv) {
  static const char* usage = "runnel topic add-partitions NAME -p TOTAL";
  auto args = parse_command({{'p', "partitions", "TOTAL", "the new total partition count"}}, argv, usage,
                            "Grows a topic to TOTAL partitions (CreatePartitions).");
  std::string name = one_positional(args, "topic name", usage);
  if (!args.has("partitions")) throw UsageError("-p TOTAL is required; usage: " + std::string(usage));
  Cluster cluster(ClientConfig::from(args));
  CreatePartitionsRequest req;
  CreatePartitionsRequest::CreatePartitionsTopic t;
  t.name = name;
  t.count = static_cast<int32_t>(*args.get_int("partitions"));
  t.assignments = std::nullopt;
  req.topics.push_back(t);
  req.timeout_ms = timeout_ms(cluster);
  auto resp = cluster.with_retries([&] {
    auto& conn = cluster.controller();
    return conn.call<CreatePartitionsApi>(req, conn.version<CreatePartitionsApi>());
  });
  for (const auto& res : resp.results)
    check(res.error_code, "adding partitions to topic '" + name + "'", res.error_message.value_or(""));
  std::printf("topic %s now has %d partitions\n", name.c_str(), t.count);
  return kExitOk;
}

int remove(const std::vector<std::string>& argv) {
  static const char* usage = "runnel topic delete NAME [NAME ...]";
  auto args = parse_command({}, argv, usage, "Deletes topics (DeleteTopics).");
  if (args.positionals().empty()) throw UsageError("missing topic name; usage: " + std::string(usage));
  Cluster cluster(ClientConfig::from(args));
  auto resp = cluster.with_retries([&] {
    auto& conn = cluster.controller();
    int16_t v = conn.version<DeleteTopicsApi>();
    DeleteTopicsRequest req;
    req.timeout_ms = timeout_ms(cluster);
    for (const auto& n : args.positionals()) {
      if (v >= 6) {
        DeleteTopicsRequest::DeleteTopicState s;
        s.name = n;
        req.topics.push_back(s);
      } else {
        req.topic_names.push_back(n);
      }
    }
    return conn.call<DeleteTopicsApi>(req, v);
  });
  int rc = kExitOk;
  for (const auto& res : resp.responses) {
    std::string n = res.name.value_or("?");
    check(res.error_code, "deleting topic '" + n + "'", res.error_message.value_or(""));
    std::printf("deleted topic %s\n", n.c_str());
  }
  return rc;
}

}  // namespace

int topic_command(const std::vector<std::string>& args) {
  static constexpr Verb kVerbs[] = {{"create", create}, {"list", list}, {"describe", describe}, {"alter-config", alter_config}, {"add-partitions", add_partitions}, {"delete", remove}};
  return dispatch_verb("topic", kVerbs, args);
}

}  // namespace runnel::cli
