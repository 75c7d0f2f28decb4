#include "broker/admin/rest/consumer_fetch.h"

#include "broker/admin/rest/broker_calls.h"
#include "protocol/records/batch_reader.h"
#include "storage/io.h"

namespace runnel::broker::admin::rest {

namespace {

using protocol::ErrorCode;
using PartitionData = p::FetchResponse::FetchableTopicResponse::PartitionData;

constexpr int16_t kFetchVersion = 12;             // the last that names topics
constexpr int32_t kPartitionMaxBytes = 1 << 20;   // max.partition.fetch.bytes
constexpr int32_t kFetchMaxBytes = 50 << 20;      // fetch.max.bytes
constexpr size_t kMaxDecompressed = 64u << 20;
constexpr int64_t kMaxWaitMs = 500;  // fetch.max.wait.ms

p::FetchRequest request_for(const std::map<TopicPartition, int64_t>& positions,
                            const std::vector<TopicPartition>& partitions, const FetchLimits& limits) {
  p::FetchRequest req;
  req.replica_id = -1;
  req.max_wait_ms = static_cast<int32_t>(limits.max_wait.count());
  req.min_bytes = 1;
  req.max_bytes = kFetchMaxBytes;
  req.isolation_level = 0;
  req.session_id = 0;
  req.session_epoch = -1;
  for (const auto& tp : partitions) {
    if (req.topics.empty() || req.topics.back().topic != tp.first) req.topics.emplace_back().topic = tp.first;
    auto& fp = req.topics.back().partitions.emplace_back();
    fp.partition = tp.second;
    fp.fetch_offset = positions.at(tp);
    fp.partition_max_bytes = kPartitionMaxBytes;
  }
  return req;
}

// The records' bytes: a forwarded answer's in memory, as they are; the
// segment file region the local handler would have sent with sendfile,
// read into `storage`. nullopt when the read fails.
std::optional<protocol::ByteView> bytes_of(const protocol::Records& records, protocol::Bytes& storage) {
  if (!records.is_file()) return records.bytes();  // empty when null
  const auto& region = records.region();
  storage.resize(static_cast<size_t>(region.length));
  auto n = storage::pread_full(region.fd, storage.data(), storage.size(), region.offset);
  if (!n) return std::nullopt;
  return protocol::ByteView(storage.data(), *n);
}

struct Decoder {
  FetchRound& round;
  std::map<TopicPartition, int64_t>& positions;
  int64_t budget;
  bool first_goes;

  void partition(const std::string& topic, const PartitionData& pd) {
    const TopicPartition tp{topic, pd.partition_index};
    auto at = positions.find(tp);
    if (at == positions.end()) return;
    const auto error = static_cast<ErrorCode>(pd.error_code);
    if (error == ErrorCode::offset_out_of_range) {
      round.out_of_range.insert(tp);
      return;
    }
    if (error == ErrorCode::topic_authorization_failed) {
      round.error = from_kafka(error, topic);
      return;
    }
    if (error != ErrorCode::none || round.full) return;  // retriable: the next round tries again
    protocol::Bytes storage;
    const std::optional<protocol::ByteView> bytes = bytes_of(pd.records, storage);
    if (!bytes) return;
    int64_t& position = at->second;
    protocol::records::BatchIterator it(*bytes);
    while (auto batch = it.next()) {
      const auto& h = batch->header;
      if (h.last_offset() < position) continue;
      if (h.is_control()) {
        position = h.last_offset() + 1;
        continue;
      }
      protocol::records::BatchRecordReader reader(batch->bytes, h, kMaxDecompressed);
      protocol::records::Record r;
      while (reader.next(r)) {
        const int64_t offset = h.base_offset + r.offset_delta;
        if (offset < position) continue;
        const int64_t size = (r.key ? static_cast<int64_t>(r.key->size()) : 0) +
                             (r.value ? static_cast<int64_t>(r.value->size()) : 0);
        // REST Proxy stops before the record that would reach the limit.
        if (size >= budget && !(first_goes && round.records.empty())) {
          round.full = true;
          return;
        }
        budget -= size;
        auto& out = round.records.emplace_back();
        out.topic = topic;
        out.partition = pd.partition_index;
        out.offset = offset;
        out.timestamp_ms = h.log_append_time() ? h.max_timestamp : h.base_timestamp + r.timestamp_delta;
        const auto str = [](protocol::ByteView v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size()); };
        if (r.key) out.key = str(*r.key);
        if (r.value) out.value = str(*r.value);
        position = offset + 1;
      }
      if (!reader.status().ok()) {
        // Nothing past a batch that cannot be read; the position stays
        // at its first record not handed out.
        if (round.records.empty())
          round.error = RestError{50002, "Kafka error: the batch at offset " + std::to_string(h.base_offset) + " of " +
                                             topic + "-" + std::to_string(pd.partition_index) + " cannot be read"};
        return;
      }
      // Compaction may leave a batch's last offsets without records.
      position = std::max(position, h.last_offset() + 1);
    }
  }

  void response(const p::FetchResponse& resp) {
    for (const auto& t : resp.responses)
      for (const auto& pd : t.partitions) partition(t.topic, pd);
  }
};

}  // namespace

awaitable<FetchRound> fetch_round(Broker& broker, const RestClient& client,
                                  std::map<TopicPartition, int64_t>& positions, FetchLimits limits) {
  FetchRound round;
  if (positions.empty()) co_return round;
  std::vector<TopicPartition> all;
  for (const auto& [tp, offset] : positions) all.push_back(tp);

  // In a cluster, partitions led elsewhere: those the local handler cannot
  // answer. The local fetch does not wait for data then, as the others'
  // answers would wait behind it.
  std::map<int32_t, std::vector<TopicPartition>> remote;
  for (const auto& tp : all)
    if (auto leader = leader_elsewhere(broker, tp.first, tp.second)) remote[*leader].push_back(tp);
  FetchLimits local_limits = limits;
  local_limits.max_wait = std::min(limits.max_wait, std::chrono::milliseconds(kMaxWaitMs));
  if (!remote.empty()) local_limits.max_wait = std::chrono::milliseconds(0);

  Decoder decoder{round, positions, limits.max_bytes, limits.first_goes};
  auto local = co_await call_broker<p::FetchApi>(broker, client, broker.node_id(),
                                                 request_for(positions, all, local_limits), kFetchVersion);
  if (local->error_code != 0) {
    round.error = from_kafka(static_cast<ErrorCode>(local->error_code), "");
    co_return round;
  }
  decoder.response(*local);
  if (remote.empty()) co_return round;

  // Forward only what the local handler answered NOT_LEADER_OR_FOLLOWER:
  // it refused the rest (authorization) or read it.
  std::set<TopicPartition> misdirected;
  for (const auto& t : local->responses)
    for (const auto& pd : t.partitions)
      if (static_cast<ErrorCode>(pd.error_code) == ErrorCode::not_leader_or_follower)
        misdirected.insert({t.topic, pd.partition_index});
  for (auto& [leader, partitions] : remote) {
    std::erase_if(partitions, [&](const TopicPartition& tp) { return !misdirected.count(tp); });
    if (partitions.empty() || round.full) continue;
    FetchLimits now = limits;
    now.max_wait = std::chrono::milliseconds(0);
    auto answer = co_await call_broker<p::FetchApi>(broker, client, leader, request_for(positions, partitions, now),
                                                    kFetchVersion);
    if (answer && answer->error_code == 0) decoder.response(*answer);
  }
  co_return round;
}

}  // namespace runnel::broker::admin::rest
