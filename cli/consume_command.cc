// `runnel consume TOPIC`: records to stdout through a kcat-style format,
// from a plain assignment (all partitions, or -p) or as a member of a
// consumer group (-G), starting where -o says.
#include <csignal>
#include <cstdio>

#include "cli/command.h"
#include "cli/fetcher.h"
#include "cli/group_member.h"
#include "cli/kafka_errors.h"
#include "cli/list_offsets.h"
#include "cli/progress.h"

namespace runnel::cli {

namespace {

constexpr const char* kUsage = "runnel consume TOPIC [-o OFFSET] [-p N ...] [-n COUNT] [-e] [-f FORMAT] [-G GROUP]";
constexpr const char* kAbout =
    "Consumes records and prints each through FORMAT (default '%s\\n').\n"
    "-o: beginning | end | OFFSET | -N (N before the end) | @TIMESTAMP_MS (first record at or after it).\n"
    "    With -G it applies only to partitions the group has no commit for (default end, as Kafka's\n"
    "    auto.offset.reset=latest); without -G the default is beginning.\n"
    "-f tokens (as kcat): %t topic, %p partition, %o offset, %k key, %K key length, %s value,\n"
    "    %S value length, %R value length as big-endian int32, %T timestamp ms, %h headers k=v,k=v,\n"
    "    %% percent; escapes \\n \\r \\t \\\\ \\xHH. A null key or value prints as nothing (%K/%S say -1).";

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

struct StartSpec {
  enum Kind { beginning, end, absolute, from_end, timestamp } kind = beginning;
  int64_t value = 0;
};

StartSpec parse_start(const std::string& s) {
  if (s == "beginning" || s == "earliest") return {StartSpec::beginning, 0};
  if (s == "end" || s == "latest") return {StartSpec::end, 0};
  if (!s.empty() && s[0] == '@') return {StartSpec::timestamp, parse_int(s.substr(1), "-o @TIMESTAMP_MS")};
  int64_t v = parse_int(s, "-o");
  if (v < 0) return {StartSpec::from_end, -v};
  return {StartSpec::absolute, v};
}

std::map<int32_t, int64_t> resolve_start(Cluster& cluster, const std::string& topic,
                                         const std::vector<int32_t>& partitions, const StartSpec& spec,
                                         int8_t isolation) {
  switch (spec.kind) {
    case StartSpec::beginning: return list_offsets(cluster, topic, partitions, kEarliestTimestamp, isolation);
    case StartSpec::end: return list_offsets(cluster, topic, partitions, kLatestTimestamp, isolation);
    case StartSpec::absolute: {
      std::map<int32_t, int64_t> out;
      for (int32_t p : partitions) out[p] = spec.value;
      return out;
    }
    case StartSpec::from_end: {
      auto first = list_offsets(cluster, topic, partitions, kEarliestTimestamp, isolation);
      auto last = list_offsets(cluster, topic, partitions, kLatestTimestamp, isolation);
      std::map<int32_t, int64_t> out;
      for (int32_t p : partitions) out[p] = std::max(first[p], last[p] - spec.value);
      return out;
    }
    case StartSpec::timestamp: {
      auto at = list_offsets(cluster, topic, partitions, spec.value, isolation);
      // No record that late: start at the end, as Kafka's offsetsForTimes users do.
      auto last = list_offsets(cluster, topic, partitions, kLatestTimestamp, isolation);
      for (auto& [p, off] : at)
        if (off < 0) off = last[p];
      return at;
    }
  }
  return {};
}

}  // namespace

int consume_command(const std::vector<std::string>& argv) {
  auto args = parse_command({{'o', "offset", "OFFSET", "where to start (see above)"},
                             {'p', "partition", "N", "read partition N only, repeatable (no group)"},
                             {'n', "count", "COUNT", "exit after COUNT records"},
                             {'e', "exit", nullptr, "exit once every partition is read to its end"},
                             {'f', "format", "FORMAT", "output format (see above)"},
                             {0, "isolation", "LEVEL", "read_uncommitted (default) or read_committed"},
                             {'G', "group", "GROUP", "consume as a member of GROUP (range assignor), committing offsets"}},
                            argv, kUsage, kAbout);
  std::string topic = one_positional(args, "topic", kUsage);
  ClientConfig config = ClientConfig::from(args);
  RecordFormat format(args.has("format") ? args.get("format") : "%s\\n");
  std::string isolation = args.get("isolation", config.get("isolation.level", "read_uncommitted"));
  if (isolation != "read_uncommitted" && isolation != "read_committed")
    throw UsageError("--isolation is read_uncommitted or read_committed, got '" + isolation + "'");
  std::optional<int64_t> count = args.get_int("count");
  bool exit_at_end = args.has("exit");
  bool in_group = args.has("group");
  if (in_group && args.has("partition")) throw UsageError("-p and -G exclude each other: a group assigns partitions");
  StartSpec start = parse_start(args.get("offset", in_group ? config.get("auto.offset.reset", "end") : "beginning"));

  FetchOptions fo;
  fo.isolation_level = isolation == "read_committed" ? 1 : 0;
  fo.max_wait_ms = static_cast<int32_t>(config.int_or("fetch.max.wait.ms", 500));
  fo.min_bytes = static_cast<int32_t>(config.int_or("fetch.min.bytes", 1));
  fo.max_bytes = static_cast<int32_t>(config.int_or("fetch.max.bytes", 52428800));
  fo.partition_max_bytes = static_cast<int32_t>(config.int_or("max.partition.fetch.bytes", 1048576));
  fo.reset_to = start.kind == StartSpec::end ? kLatestTimestamp : kEarliestTimestamp;

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  Cluster cluster(config);
  auto info = cluster.with_retries([&] { return cluster.topic(topic); });
  Fetcher fetcher(cluster, topic, fo);
  std::unique_ptr<GroupMember> member;
  bool auto_commit = config.get("enable.auto.commit", "true") == "true";
  auto commit_interval = std::chrono::milliseconds(config.int_or("auto.commit.interval.ms", 5000));
  auto last_commit = std::chrono::steady_clock::now();

  auto assign = [&](std::vector<int32_t> partitions) {
    std::map<int32_t, int64_t> positions;
    if (member) {
      std::vector<TopicPartition> tps;
      for (int32_t p : partitions) tps.emplace_back(topic, p);
      auto committed = fetch_committed(cluster, args.get("group"), tps);
      std::vector<int32_t> without;
      for (int32_t p : partitions) {
        auto it = committed.find({topic, p});
        if (it != committed.end())
          positions[p] = it->second;
        else
          without.push_back(p);
      }
      for (const auto& [p, off] : resolve_start(cluster, topic, without, start, fo.isolation_level)) positions[p] = off;
    } else {
      positions = resolve_start(cluster, topic, partitions, start, fo.isolation_level);
    }
    fetcher.assign(positions);
  };

  if (in_group) {
    GroupOptions go;
    go.session_timeout = std::chrono::milliseconds(config.int_or("session.timeout.ms", 45000));
    go.heartbeat_interval = std::chrono::milliseconds(config.int_or("heartbeat.interval.ms", 3000));
    go.rebalance_timeout = std::chrono::milliseconds(config.int_or("max.poll.interval.ms", 300000));
    member = std::make_unique<GroupMember>(cluster, args.get("group"), topic, go);
    assign(member->join());
  } else {
    std::vector<int32_t> partitions;
    for (const auto& p : args.all("partition")) {
      int64_t v = parse_int(p, "-p");
      if (v < 0 || v >= static_cast<int64_t>(info.partitions.size()))
        throw KafkaError(3, "partition " + topic + "/" + p,
                         "the topic has " + std::to_string(info.partitions.size()) + " partitions");
      partitions.push_back(static_cast<int32_t>(v));
    }
    if (partitions.empty())
      for (const auto& p : info.partitions) partitions.push_back(p.partition);
    assign(partitions);
  }

  auto commit = [&] {
    if (member && auto_commit) member->commit(fetcher.positions());
    last_commit = std::chrono::steady_clock::now();
  };

  Progress progress("consumed");
  uint64_t consumed = 0;
  std::string out;
  auto on_record = [&](const ConsumedRecord& r) {
    format.format(r, out);
    ++consumed;
    return !(count && static_cast<int64_t>(consumed) >= *count);
  };
  bool done = count && *count <= 0;
  while (!done && !g_stop) {
    if (exit_at_end && fetcher.at_end()) break;
    bool more = fetcher.poll(on_record);
    if (!out.empty()) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      out.clear();
    }
    progress.update(consumed, fetcher.bytes_fetched());
    if (!more) done = true;
    if (member) {
      if (std::chrono::steady_clock::now() - last_commit >= commit_interval) commit();
      if (!done && !member->heartbeat_if_due()) {
        try {
          commit();
        } catch (const KafkaError& e) {
          // The old generation is gone (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
          // REBALANCE_IN_PROGRESS): the new assignment starts from the group's commits.
          if (e.code() != 22 && e.code() != 25 && e.code() != 27) throw;
        }
        assign(member->join());
      }
    }
  }
  if (member) {
    commit();
    member->leave();
  }
  progress.finish(consumed, fetcher.bytes_fetched());
  return kExitOk;
}

}  // namespace runnel::cli
