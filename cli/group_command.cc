// `runnel group list|describe|reset-offsets|delete`: ListGroups on every
// broker, DescribeGroups + OffsetFetch + ListOffsets for lag, OffsetCommit
// from outside the group, DeleteGroups; each at the group's coordinator.
#include <cstdio>
#include <set>

#include "cli/cluster.h"
#include "cli/command.h"
#include "protocol/consumer_protocol.h"
#include "cli/group_offsets.h"
#include "cli/kafka_errors.h"
#include "cli/list_offsets.h"
#include "cli/table.h"
#include "protocol/messages/15_describe_groups.h"
#include "protocol/messages/16_list_groups.h"
#include "protocol/messages/42_delete_groups.h"

namespace runnel::cli {

namespace json = boost::json;
using namespace protocol;

namespace {

constexpr OptionSpec kOutputOption{'o', "output", "text|json", "output format (default text)"};

DescribeGroupsResponse::DescribedGroup describe_group(Cluster& cluster, const std::string& group_id) {
  return cluster.with_retries([&] {
    auto& conn = cluster.coordinator(group_id);
    DescribeGroupsRequest req;
    req.groups.push_back(group_id);
    auto resp = conn.call<DescribeGroupsApi>(req, conn.version<DescribeGroupsApi>());
    if (resp.groups.empty()) throw KafkaError(69, "DescribeGroups for '" + group_id + "'");
    auto g = resp.groups.front();
    check(g.error_code, "DescribeGroups for '" + group_id + "'", g.error_message.value_or(""));
    return g;
  });
}

int list(const std::vector<std::string>& argv) {
  auto args = parse_command({kOutputOption}, argv, "runnel group list [-o json]",
                            "Lists consumer groups (ListGroups on every broker: each knows the groups it coordinates).");
  bool as_json = wants_json(args.get("output"));
  Cluster cluster(ClientConfig::from(args));
  auto md = cluster.with_retries([&] { return cluster.metadata(std::vector<std::string>{}); });
  Table table({"GROUP", "STATE", "PROTOCOL-TYPE", "COORDINATOR"});
  json::array out;
  std::set<std::string> seen;
  for (const auto& b : md.brokers) {
    auto resp = cluster.with_retries([&] {
      auto& conn = cluster.broker(b.node_id);
      return conn.call<ListGroupsApi>(ListGroupsRequest{}, conn.version<ListGroupsApi>());
    });
    check(resp.error_code, "ListGroups on broker " + std::to_string(b.node_id));
    for (const auto& g : resp.groups) {
      if (!seen.insert(g.group_id).second) continue;
      table.add({g.group_id, g.group_state, g.protocol_type, std::to_string(b.node_id)});
      out.push_back(json::object{{"group", g.group_id},
                                 {"state", g.group_state},
                                 {"protocol_type", g.protocol_type},
                                 {"coordinator", b.node_id}});
    }
  }
  if (as_json)
    print_json(out);
  else
    std::fputs(table.render().c_str(), stdout);
  return kExitOk;
}

int describe(const std::vector<std::string>& argv) {
  static const char* usage = "runnel group describe GROUP [-o json]";
  auto args = parse_command({kOutputOption}, argv, usage,
                            "Describes a group: state, members, and per partition the committed offset, the log end "
                            "offset, the lag between them and the member that holds the partition.");
  std::string group_id = one_positional(args, "group", usage);
  bool as_json = wants_json(args.get("output"));
  Cluster cluster(ClientConfig::from(args));
  auto g = describe_group(cluster, group_id);
  if (g.group_state == "Dead") throw KafkaError(69, "group '" + group_id + "'", "the group does not exist");

  // Who holds what, from the members' assignments (consumer protocol only).
  std::map<TopicPartition, const DescribeGroupsResponse::DescribedGroup::DescribedGroupMember*> holder;
  for (const auto& m : g.members) {
    if (g.protocol_type != "consumer") break;
    auto a = decode_assignment(m.member_assignment);
    if (!a) continue;
    for (const auto& [t, ps] : *a)
      for (int32_t p : ps) holder[{t, p}] = &m;
  }
  auto committed = fetch_committed(cluster, group_id, std::nullopt);
  std::set<TopicPartition> partitions;
  for (const auto& [tp, off] : committed) partitions.insert(tp);
  for (const auto& [tp, m] : holder) partitions.insert(tp);
  std::map<std::string, std::vector<int32_t>> by_topic;
  for (const auto& [t, p] : partitions) by_topic[t].push_back(p);
  std::map<TopicPartition, int64_t> log_end;
  for (const auto& [t, ps] : by_topic)
    for (const auto& [p, off] : list_offsets(cluster, t, ps, kLatestTimestamp)) log_end[{t, p}] = off;

  Table table({"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER-ID", "CLIENT-ID", "HOST"});
  json::array jparts;
  int64_t total_lag = 0;
  for (const auto& tp : partitions) {
    auto c = committed.find(tp);
    int64_t end = log_end[tp];
    auto h = holder.find(tp);
    const auto* m = h == holder.end() ? nullptr : h->second;
    std::optional<int64_t> lag;
    if (c != committed.end()) lag = std::max<int64_t>(0, end - c->second);
    if (lag) total_lag += *lag;
    table.add({tp.first, std::to_string(tp.second), c == committed.end() ? "-" : std::to_string(c->second),
               std::to_string(end), lag ? std::to_string(*lag) : "-", m ? m->member_id : "-", m ? m->client_id : "-",
               m ? m->client_host : "-"});
    jparts.push_back(json::object{{"topic", tp.first},
                                  {"partition", tp.second},
                                  {"current_offset", c == committed.end() ? json::value(nullptr) : json::value(c->second)},
                                  {"log_end_offset", end},
                                  {"lag", lag ? json::value(*lag) : json::value(nullptr)},
                                  {"member_id", m ? json::value(m->member_id) : json::value(nullptr)},
                                  {"client_id", m ? json::value(m->client_id) : json::value(nullptr)},
                                  {"host", m ? json::value(m->client_host) : json::value(nullptr)}});
  }
  if (as_json) {
    json::array members;
    for (const auto& m : g.members)
      members.push_back(json::object{{"member_id", m.member_id}, {"client_id", m.client_id}, {"host", m.client_host}});
    print_json(json::object{{"group", group_id},
                            {"state", g.group_state},
                            {"protocol_type", g.protocol_type},
                            {"protocol", g.protocol_data},
                            {"members", members},
                            {"partitions", jparts},
                            {"total_lag", total_lag}});
    return kExitOk;
  }
  std::printf("GROUP %s  STATE %s  PROTOCOL %s  MEMBERS %zu  TOTAL-LAG %lld\n", group_id.c_str(), g.group_state.c_str(),
              g.protocol_data.empty() ? "-" : g.protocol_data.c_str(), g.members.size(),
              static_cast<long long>(total_lag));
  if (!table.empty()) std::fputs(table.render().c_str(), stdout);
  return kExitOk;
}

int reset_offsets(const std::vector<std::string>& argv) {
  static const char* usage =
      "runnel group reset-offsets GROUP --topic T [-p N ...] --to-earliest|--to-latest|--to-offset N [--execute]";
  auto args = parse_command({{0, "topic", "TOPIC", "the topic whose offsets to reset"},
                             {'p', "partition", "N", "only partition N, repeatable (default: every partition)"},
                             {0, "to-earliest", nullptr, "to the log start offset"},
                             {0, "to-latest", nullptr, "to the log end offset"},
                             {0, "to-offset", "N", "to offset N"},
                             {0, "execute", nullptr, "commit the new offsets (without it: show them only)"},
                             kOutputOption},
                            argv, usage,
                            "Sets a group's committed offsets, as kafka-consumer-groups --reset-offsets does. The group "
                            "must have no active members.");
  std::string group_id = one_positional(args, "group", usage);
  if (!args.has("topic")) throw UsageError("--topic is required; usage: " + std::string(usage));
  int targets = args.has("to-earliest") + args.has("to-latest") + args.has("to-offset");
  if (targets != 1) throw UsageError("give exactly one of --to-earliest, --to-latest, --to-offset");
  bool as_json = wants_json(args.get("output"));
  std::string topic = args.get("topic");
  Cluster cluster(ClientConfig::from(args));
  auto info = cluster.with_retries([&] { return cluster.topic(topic); });
  std::vector<int32_t> partitions;
  for (const auto& p : args.all("partition")) partitions.push_back(static_cast<int32_t>(parse_int(p, "-p")));
  if (partitions.empty())
    for (const auto& p : info.partitions) partitions.push_back(p.partition);

  auto g = describe_group(cluster, group_id);
  if (g.group_state != "Empty" && g.group_state != "Dead")
    throw KafkaError(68, "resetting offsets of group '" + group_id + "'",
                     "the group is " + g.group_state + " with " + std::to_string(g.members.size()) + " members");

  auto earliest = list_offsets(cluster, topic, partitions, kEarliestTimestamp);
  auto latest = list_offsets(cluster, topic, partitions, kLatestTimestamp);
  std::map<TopicPartition, int64_t> target;
  for (int32_t p : partitions) {
    int64_t off = args.has("to-earliest") ? earliest[p] : args.has("to-latest") ? latest[p] : *args.get_int("to-offset");
    // As Kafka's tool: an offset outside the log is moved to its nearest end.
    target[{topic, p}] = std::clamp(off, earliest[p], latest[p]);
  }
  bool execute = args.has("execute");
  if (execute) commit_offsets(cluster, group_id, GenerationInfo{}, target);
  Table table({"TOPIC", "PARTITION", "NEW-OFFSET"});
  json::array out;
  for (const auto& [tp, off] : target) {
    table.add({tp.first, std::to_string(tp.second), std::to_string(off)});
    out.push_back(json::object{{"topic", tp.first}, {"partition", tp.second}, {"new_offset", off}});
  }
  if (as_json) {
    print_json(json::object{{"group", group_id}, {"executed", execute}, {"partitions", out}});
  } else {
    std::fputs(table.render().c_str(), stdout);
    if (!execute) std::printf("(not committed: add --execute to commit these offsets)\n");
  }
  return kExitOk;
}

int remove(const std::vector<std::string>& argv) {
  static const char* usage = "runnel group delete GROUP [GROUP ...]";
  auto args = parse_command({}, argv, usage, "Deletes groups without members, and their committed offsets (DeleteGroups).");
  if (args.positionals().empty()) throw UsageError("missing group; usage: " + std::string(usage));
  Cluster cluster(ClientConfig::from(args));
  for (const auto& group_id : args.positionals()) {
    auto resp = cluster.with_retries([&] {
      auto& conn = cluster.coordinator(group_id);
      DeleteGroupsRequest req;
      req.groups_names.push_back(group_id);
      auto r = conn.call<DeleteGroupsApi>(req, conn.version<DeleteGroupsApi>());
      for (const auto& res : r.results)
        if (is_retriable(res.error_code)) throw KafkaError(res.error_code, "DeleteGroups");
      return r;
    });
    for (const auto& res : resp.results) check(res.error_code, "deleting group '" + res.group_id + "'");
    std::printf("deleted group %s\n", group_id.c_str());
  }
  return kExitOk;
}

}  // namespace

int group_command(const std::vector<std::string>& args) {
  static constexpr Verb kVerbs[] = {{"list", list}, {"describe", describe}, {"reset-offsets", reset_offsets}, {"delete", remove}};
  return dispatch_verb("group", kVerbs, args);
}

}  // namespace runnel::cli
