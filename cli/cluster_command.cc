// `runnel cluster info|health`: who the cluster is (DescribeCluster, or
// Metadata from brokers that lack it) and whether every partition has a
// leader and its full ISR.
#include <cstdio>

#include "cli/cluster.h"
#include "cli/command.h"
#include "cli/kafka_errors.h"
#include "cli/table.h"
#include "protocol/messages/60_describe_cluster.h"

namespace runnel::cli {

namespace json = boost::json;
using namespace protocol;

namespace {

constexpr OptionSpec kOutputOption{'o', "output", "text|json", "output format (default text)"};

int info(const std::vector<std::string>& argv) {
  auto args = parse_command({kOutputOption}, argv, "runnel cluster info [-o json]",
                            "Shows the cluster id, the controller and the brokers.");
  bool as_json = wants_json(args.get("output"));
  Cluster cluster(ClientConfig::from(args));
  std::string cluster_id;
  int32_t controller = -1;
  std::vector<BrokerInfo> brokers;
  if (cluster.any().supports(DescribeClusterApi::key)) {
    auto resp = cluster.with_retries([&] {
      auto& conn = cluster.any();
      return conn.call<DescribeClusterApi>(DescribeClusterRequest{}, conn.version<DescribeClusterApi>());
    });
    check(resp.error_code, "DescribeCluster", resp.error_message.value_or(""));
    cluster_id = resp.cluster_id;
    controller = resp.controller_id;
    for (const auto& b : resp.brokers) brokers.push_back({b.broker_id, b.host, b.port, b.rack});
  } else {
    auto md = cluster.with_retries([&] { return cluster.metadata(std::vector<std::string>{}); });
    cluster_id = md.cluster_id.value_or("");
    controller = md.controller_id;
    brokers = md.brokers;
  }
  Table table({"ID", "HOST", "PORT", "RACK", "ROLE"});
  json::array jb;
  for (const auto& b : brokers) {
    table.add({std::to_string(b.node_id), b.host, std::to_string(b.port), b.rack.value_or("-"),
               b.node_id == controller ? "controller" : "broker"});
    jb.push_back(json::object{{"id", b.node_id},
                              {"host", b.host},
                              {"port", b.port},
                              {"rack", b.rack ? json::value(*b.rack) : json::value(nullptr)}});
  }
  if (as_json) {
    print_json(json::object{{"cluster_id", cluster_id}, {"controller_id", controller}, {"brokers", jb}});
    return kExitOk;
  }
  std::printf("CLUSTER %s  CONTROLLER %d  BROKERS %zu\n", cluster_id.c_str(), controller, brokers.size());
  std::fputs(table.render().c_str(), stdout);
  return kExitOk;
}

int health(const std::vector<std::string>& argv) {
  auto args = parse_command({kOutputOption}, argv, "runnel cluster health [-o json]",
                            "Checks that every partition (internal topics too) has a leader and its full ISR. "
                            "Exit code 0 when healthy, 4 when not.");
  bool as_json = wants_json(args.get("output"));
  Cluster cluster(ClientConfig::from(args));
  auto md = cluster.with_retries([&] { return cluster.metadata(std::nullopt); });
  Table problems({"TOPIC", "PARTITION", "PROBLEM", "LEADER", "REPLICAS", "ISR"});
  json::array jp;
  size_t partitions = 0, leaderless = 0, under_replicated = 0;
  for (const auto& [name, t] : md.topics) {
    if (t.error_code) {
      problems.add({name, "-", error_name(t.error_code), "-", "-", "-"});
      jp.push_back(json::object{{"topic", name}, {"problem", error_name(t.error_code)}});
      ++leaderless;
      continue;
    }
    for (const auto& p : t.partitions) {
      ++partitions;
      const char* problem = nullptr;
      if (p.leader < 0) {
        problem = "no leader";
        ++leaderless;
      } else if (p.isr.size() < p.replicas.size()) {
        problem = "under-replicated";
        ++under_replicated;
      }
      if (!problem) continue;
      problems.add({name, std::to_string(p.partition), problem, std::to_string(p.leader), join_ints(p.replicas),
                    join_ints(p.isr)});
      jp.push_back(json::object{{"topic", name},
                                {"partition", p.partition},
                                {"problem", problem},
                                {"leader", p.leader},
                                {"replicas", json::value_from(p.replicas)},
                                {"isr", json::value_from(p.isr)}});
    }
  }
  bool healthy = leaderless == 0 && under_replicated == 0;
  if (as_json) {
    print_json(json::object{{"healthy", healthy},
                            {"brokers", md.brokers.size()},
                            {"partitions", partitions},
                            {"leaderless", leaderless},
                            {"under_replicated", under_replicated},
                            {"problems", jp}});
  } else {
    std::printf("%s: %zu brokers, %zu partitions, %zu without a leader, %zu under-replicated\n",
                healthy ? "healthy" : "UNHEALTHY", md.brokers.size(), partitions, leaderless, under_replicated);
    if (!problems.empty()) std::fputs(problems.render().c_str(), stdout);
  }
  return healthy ? kExitOk : kExitUnhealthy;
}

}  // namespace

int cluster_command(const std::vector<std::string>& args) {
  static constexpr Verb kVerbs[] = {{"info", info}, {"health", health}};
  return dispatch_verb("cluster", kVerbs, args);
}

}  // namespace runnel::cli
