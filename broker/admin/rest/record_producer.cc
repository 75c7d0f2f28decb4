#include "broker/admin/rest/record_producer.h"

#include <map>

#include "base/clock.h"
#include "broker/admin/rest/broker_calls.h"
#include "broker/broker.h"
#include "broker/inter_broker_channel.h"
#include "broker/logging.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/key_partitioner.h"

namespace runnel::broker::admin::rest {

namespace {

using protocol::ErrorCode;

constexpr int16_t kMetadataVersion = 12;
constexpr int16_t kProduceVersion = 11;
constexpr int32_t kProduceTimeoutMs = 30'000;  // the Java producer's request.timeout.ms
// How long a topic that Metadata is creating (LEADER_NOT_AVAILABLE) is
// asked about again before the answer stands.
constexpr auto kCreationWait = std::chrono::seconds(10);
constexpr auto kCreationPoll = std::chrono::milliseconds(50);

RecordOutcome failed(const RestError& e, bool is_retriable = false) {
  RecordOutcome o;
  o.error_code = e.error_code;
  o.message = e.message;
  o.retriable = is_retriable;
  return o;
}

// In a cluster the local Produce handler answers NOT_LEADER_OR_FOLLOWER
// for the partitions another broker leads, after its ACL and validation
// checks: their batches go on to each one's leader over the inter-broker
// channel, where REST Proxy's producer would have sent them, and the
// leader's answers stand for those partitions. A leader that cannot be
// reached leaves NOT_LEADER_OR_FOLLOWER (retriable) in place.
awaitable<void> forward_to_leaders(Broker& broker, const p::ProduceRequest& req, p::ProduceResponse& resp) {
  const auto& topic_data = req.topic_data.front();
  auto& answers = resp.responses.front().partition_responses;
  std::map<NodeId, p::ProduceRequest> by_leader;
  for (const auto& pr : answers) {
    if (static_cast<ErrorCode>(pr.error_code) != ErrorCode::not_leader_or_follower) continue;
    const std::optional<int32_t> leader = leader_elsewhere(broker, topic_data.name, pr.index);
    if (!leader) continue;
    auto [it, fresh] = by_leader.try_emplace(NodeId(*leader));
    p::ProduceRequest& fwd = it->second;
    if (fresh) {
      fwd.acks = req.acks;
      fwd.timeout_ms = req.timeout_ms;
      fwd.topic_data.emplace_back().name = topic_data.name;
    }
    for (const auto& pd : topic_data.partition_data)
      if (pd.index == pr.index) fwd.topic_data.front().partition_data.push_back(pd);
  }
  for (const auto& [leader, fwd] : by_leader) {
    auto answer = co_await broker.inter_broker()->send<p::ProduceApi>(leader, fwd, kProduceVersion);
    if (!answer) {
      RLOG_WARN("REST produce to %s: forwarding to leader %d failed: %s", topic_data.name.c_str(), leader.value(),
                answer.error().message().c_str());
      continue;
    }
    for (const auto& tr : answer->responses)
      for (const auto& theirs : tr.partition_responses)
        for (auto& ours : answers)
          if (ours.index == theirs.index) ours = theirs;
  }
}

}  // namespace

awaitable<std::variant<int32_t, RestError>> RecordProducer::partitions_of(const RestClient& client,
                                                                          const std::string& topic) {
  const auto deadline = std::chrono::steady_clock::now() + kCreationWait;
  asio::steady_timer timer(broker_.io());
  for (;;) {
    p::MetadataRequest req;
    req.topics = std::vector<p::MetadataRequest::MetadataRequestTopic>(1);
    req.topics->front().name = topic;
    req.allow_auto_topic_creation = true;
    // This broker's own handler: it always answers.
    auto answer = co_await call_broker<p::MetadataApi>(broker_, client, broker_.node_id(), req, kMetadataVersion);
    const p::MetadataResponse& resp = *answer;
    if (resp.topics.empty()) co_return RestError{50002, "Kafka error: no metadata for the topic"};
    const auto& t = resp.topics.front();
    const auto error = static_cast<ErrorCode>(t.error_code);
    if (error == ErrorCode::none && !t.partitions.empty()) co_return static_cast<int32_t>(t.partitions.size());
    if (error == ErrorCode::unknown_topic_or_partition) co_return errors::topic_not_found();
    if (error == ErrorCode::topic_authorization_failed) co_return from_kafka(error, topic);
    if (error == ErrorCode::invalid_topic_exception) co_return errors::topic_not_found();
    if (error != ErrorCode::leader_not_available && error != ErrorCode::none) co_return from_kafka(error, topic);
    // Being created: ask again shortly.
    if (std::chrono::steady_clock::now() >= deadline) co_return from_kafka(ErrorCode::leader_not_available, topic);
    timer.expires_after(kCreationPoll);
    co_await timer.async_wait(as_tuple_awaitable);
  }
}

int32_t RecordProducer::sticky_partition(const std::string& topic, int32_t partitions, size_t bytes) {
  Sticky& s = sticky_[topic];
  if (s.bytes >= kStickyBytes) {
    ++s.partition;
    s.bytes = 0;
  }
  s.bytes += bytes;
  return static_cast<int32_t>(s.partition % static_cast<uint32_t>(partitions));
}

awaitable<std::vector<RecordOutcome>> RecordProducer::produce(const RestClient& client, const std::string& topic,
                                                              int32_t partitions,
                                                              const std::vector<RestRecord>& records) {
  std::vector<RecordOutcome> outcomes(records.size());
  const int64_t now_ms = runnel::Clock::system().wall_ms();
  // Records by partition, each in request order: their indexes into `records`.
  std::map<int32_t, std::vector<size_t>> by_partition;
  for (size_t i = 0; i < records.size(); ++i) {
    const RestRecord& r = records[i];
    int32_t partition;
    if (r.partition) {
      if (*r.partition >= partitions) {
        outcomes[i] = failed(errors::partition_not_found());
        continue;
      }
      partition = *r.partition;
    } else if (r.key) {
      partition = protocol::partition_for_key(*r.key, partitions);
    } else {
      partition = sticky_partition(topic, partitions, r.value ? r.value->size() : 0);
    }
    outcomes[i].partition = partition;
    outcomes[i].timestamp_ms = r.timestamp_ms.value_or(now_ms);
    by_partition[partition].push_back(i);
  }
  if (by_partition.empty()) co_return outcomes;

  p::ProduceRequest req;
  req.acks = -1;
  req.timeout_ms = kProduceTimeoutMs;
  auto& topic_data = req.topic_data.emplace_back();
  topic_data.name = topic;
  for (const auto& [partition, indexes] : by_partition) {
    std::vector<protocol::records::Record> batch;
    batch.reserve(indexes.size());
    const int64_t base_timestamp = outcomes[indexes.front()].timestamp_ms;
    for (size_t j = 0; j < indexes.size(); ++j) {
      const RestRecord& r = records[indexes[j]];
      auto& rec = batch.emplace_back();
      rec.offset_delta = static_cast<int32_t>(j);
      rec.timestamp_delta = outcomes[indexes[j]].timestamp_ms - base_timestamp;
      const auto view = [](const std::string& s) {
        return protocol::ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
      };
      if (r.key) rec.key = view(*r.key);
      if (r.value) rec.value = view(*r.value);
      for (const auto& h : r.headers)
        rec.headers.push_back({h.name, h.value ? std::optional(view(*h.value)) : std::nullopt});
    }
    protocol::records::BatchSpec spec;
    spec.base_timestamp = base_timestamp;
    auto bytes = std::make_shared<protocol::Bytes>(protocol::records::build_batch(spec, batch));
    auto& pd = topic_data.partition_data.emplace_back();
    pd.index = partition;
    pd.records = protocol::Records::view(protocol::ByteView(bytes->data(), bytes->size()), bytes);
  }

  auto answer = co_await call_broker<p::ProduceApi>(broker_, client, broker_.node_id(), req, kProduceVersion);
  p::ProduceResponse& resp = *answer;
  if (broker_.in_cluster() && broker_.inter_broker() && !resp.responses.empty())
    co_await forward_to_leaders(broker_, req, resp);
  for (const auto& tr : resp.responses) {
    for (const auto& pr : tr.partition_responses) {
      auto it = by_partition.find(pr.index);
      if (it == by_partition.end()) continue;
      auto error = static_cast<ErrorCode>(pr.error_code);
      const std::string message = pr.error_message.value_or("");
      for (size_t j = 0; j < it->second.size(); ++j) {
        RecordOutcome& o = outcomes[it->second[j]];
        if (error != ErrorCode::none) {
          o = failed(from_kafka(error, topic, message), retriable(error));
          continue;
        }
        o.offset = pr.base_offset + static_cast<int64_t>(j);
        if (pr.log_append_time_ms != -1) o.timestamp_ms = pr.log_append_time_ms;
      }
    }
  }
  co_return outcomes;
}

}  // namespace runnel::broker::admin::rest
