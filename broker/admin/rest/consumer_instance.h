// One REST Proxy v2 consumer instance (POST /consumers/{group}): what REST
// Proxy keeps a KafkaConsumer for. It subscribes to topics (a list or a
// pattern) as a member of its group, or is assigned partitions by hand;
// keeps a position per partition (the committed offset, else
// auto.offset.reset, else where a seek put it); hands out records on
// poll; commits what it handed out, by request or every
// auto.commit.interval.ms when auto.commit.enable is true. One operation
// runs at a time per instance (REST Proxy synchronizes on its consumer),
// and a heartbeat runs beside them while the instance is a group member.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broker/admin/rest/consumer_group_member.h"
#include "broker/admin/rest/rest_error.h"
#include "broker/admin/rest/v2_records_json.h"

namespace re2 {
class RE2;
}

namespace runnel::broker::admin::rest {

struct ConsumerInstanceConfig {
  EmbeddedFormat format = EmbeddedFormat::binary;
  enum class Reset { earliest, latest, none } auto_offset_reset = Reset::latest;
  bool auto_commit = true;  // enable.auto.commit's default
  std::chrono::milliseconds auto_commit_interval{5'000};
  // A poll answers once more than this many bytes came (-1: it collects
  // until its timeout or request_max_bytes, as REST Proxy's reads do).
  int64_t fetch_min_bytes = -1;
  std::chrono::milliseconds request_timeout{1'000};  // consumer.request.timeout.ms
  int64_t request_max_bytes = 64 * 1024 * 1024;      // consumer.request.max.bytes
};

// A record handed out by poll; key and value are the record's bytes.
struct ConsumedRestRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;
  std::optional<std::string> key;
  std::optional<std::string> value;
};

class ConsumerInstance : public std::enable_shared_from_this<ConsumerInstance> {
 public:
  ConsumerInstance(Broker& broker, RestClient client, std::string group, std::string name,
                   ConsumerInstanceConfig config);
  ~ConsumerInstance();

  // The instance's turn for a scope (lock() awaited first), given back
  // however the scope ends.
  class Turn {
   public:
    explicit Turn(ConsumerInstance& c) : c_(c) {}
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;
    ~Turn() { c_.unlock(); }

   private:
    ConsumerInstance& c_;
  };

  const std::string& group() const { return member_.group_id(); }
  const std::string& name() const { return name_; }
  const ConsumerInstanceConfig& config() const { return config_; }
  std::chrono::steady_clock::time_point last_used() const { return last_used_; }
  bool closed() const { return closed_; }
  bool busy() const { return busy_; }
  // Who created it: only that principal may use it.
  const security::KafkaPrincipal& owner() const { return client_.principal; }

  // Every operation below takes the instance's turn: at most one runs.
  awaitable<void> lock();
  void unlock();

  // 409 40903 when the instance is assigned partitions by hand.
  awaitable<std::optional<RestError>> subscribe(std::vector<std::string> topics);
  awaitable<std::optional<RestError>> subscribe_pattern(const std::string& pattern);
  awaitable<void> unsubscribe();
  std::vector<std::string> subscription() const;
  // 409 40903 when the instance is subscribed.
  awaitable<std::optional<RestError>> assign(std::vector<TopicPartition> partitions);
  const std::vector<TopicPartition>& assignment() const { return assignment_; }

  // A seek on partitions of the assignment; 40903 for one outside it.
  std::optional<RestError> seek(const std::map<TopicPartition, int64_t>& offsets);
  awaitable<std::optional<RestError>> seek_to(const std::vector<TopicPartition>& partitions, bool beginning);
  // Seeks each partition to its first offset at or after a timestamp (epoch
  // ms), or to its end when it has none.
  awaitable<std::optional<RestError>> seek_to_times(const std::map<TopicPartition, int64_t>& timestamps);

  // Records that came within `timeout`, as REST Proxy's read task
  // collects them: until the timeout, or `max_bytes` of keys and values
  // (the record that would reach it stays for the next poll; the first
  // always goes, so a larger record cannot stall the instance), or more than
  // fetch.min.bytes; an empty list when none came.
  awaitable<std::variant<std::vector<ConsumedRestRecord>, RestError>> poll(std::chrono::milliseconds timeout,
                                                                          int64_t max_bytes);

  // Commits `offsets` (nullopt: every position poll has handed out so far).
  awaitable<std::variant<std::map<TopicPartition, int64_t>, RestError>> commit(
      std::optional<std::map<TopicPartition, int64_t>> offsets);
  awaitable<std::variant<std::map<TopicPartition, std::pair<int64_t, std::string>>, RestError>> committed(
      const std::vector<TopicPartition>& partitions);

  // Leaves the group (committing first under auto commit) and stops the heartbeat.
  awaitable<void> close();

 private:
  enum class Mode { none, topics, pattern, assigned };

  awaitable<void> heartbeat_loop();
  // Joins the group when it must (subscribed and not a member of the
  // current generation); nullopt once a member, else the error.
  awaitable<std::optional<RestError>> ensure_member(std::chrono::steady_clock::time_point deadline);
  awaitable<void> run_join();
  // The topics the subscription covers now and their partition counts: a
  // pattern's matches among those the client may describe, or the listed
  // topics that exist.
  awaitable<std::map<std::string, int32_t>> subscribed_topics();
  void set_assignment(std::vector<TopicPartition> partitions);
  // Gives each assigned partition without a position one: the committed
  // offset, else auto.offset.reset's.
  awaitable<std::optional<RestError>> fill_positions();
  // ListOffsets for `partitions` at `timestamp` (-2 earliest, -1 latest).
  awaitable<std::optional<RestError>> reset_positions(const std::vector<TopicPartition>& partitions, int64_t timestamp);
  // ListOffsets at each partition's timestamp; the offsets found (-1: none).
  awaitable<std::variant<std::map<TopicPartition, int64_t>, RestError>> list_offsets(
      const std::map<TopicPartition, int64_t>& timestamps);
  awaitable<void> auto_commit_if_due(bool now);
  awaitable<void> pause_until(std::chrono::steady_clock::time_point when);
  void touch() { last_used_ = std::chrono::steady_clock::now(); }

  Broker& broker_;
  RestClient client_;
  std::string name_;
  ConsumerInstanceConfig config_;
  ConsumerGroupMember member_;
  Mode mode_ = Mode::none;
  std::vector<std::string> topics_;
  std::string pattern_text_;
  std::unique_ptr<re2::RE2> pattern_;
  std::vector<std::string> joined_topics_;      // the subscription the last join sent
  std::map<std::string, int32_t> joined_counts_;  // what it covered then: a change means rejoin
  uint64_t subscription_epoch_ = 0;  // moves on every subscribe, unsubscribe and close
  std::chrono::steady_clock::time_point last_metadata_check_;
  bool needs_join_ = false;
  bool joining_ = false;
  std::optional<RestError> join_error_;
  std::vector<TopicPartition> assignment_;
  std::map<TopicPartition, int64_t> positions_;  // the next offset to fetch
  std::map<TopicPartition, int64_t> consumed_;   // handed out, not yet committed: next offset
  std::chrono::steady_clock::time_point last_commit_;
  std::chrono::steady_clock::time_point last_used_;
  bool busy_ = false;
  bool closed_ = false;
  bool heartbeating_ = false;
  asio::steady_timer turn_;     // wakes those waiting for their turn
  asio::steady_timer joined_;   // wakes a poll waiting for the join
  asio::steady_timer beat_;     // the heartbeat's interval
};

}  // namespace runnel::broker::admin::rest
