#include "cli/fetcher.h"

#include <algorithm>
#include <set>
#include <thread>

#include "cli/list_offsets.h"
#include "protocol/messages/01_fetch.h"
#include "protocol/records/batch_reader.h"
#include "protocol/records/control_record.h"

namespace runnel::cli {

using namespace protocol;
using PartitionData = FetchResponse::FetchableTopicResponse::PartitionData;

Fetcher::Fetcher(Cluster& cluster, std::string topic, FetchOptions options)
    : cluster_(cluster), topic_(std::move(topic)), options_(options) {}

void Fetcher::assign(std::map<int32_t, int64_t> positions) {
  positions_ = std::move(positions);
  end_.clear();
}

bool Fetcher::at_end() const {
  for (const auto& [p, pos] : positions_) {
    auto it = end_.find(p);
    if (it == end_.end() || pos < it->second) return false;
  }
  return true;
}

bool Fetcher::poll(const std::function<bool(const ConsumedRecord&)>& on_record) {
  // Group the assignment by leader.
  std::map<BrokerConnection*, std::vector<int32_t>> by_leader;
  bool retry = false;
  for (const auto& [p, pos] : positions_) {
    try {
      by_leader[&cluster_.leader(topic_, p)].push_back(p);
    } catch (const KafkaError& e) {
      if (!is_retriable(e.code())) throw;
      retry = true;
    } catch (const ConnectError&) {
      retry = true;
    }
  }
  struct Sent {
    BrokerConnection* conn;
    int32_t correlation_id;
    int16_t version;
  };
  std::vector<Sent> sent;
  for (auto& [conn, parts] : by_leader) {
    try {
      // v12 is the last version that names topics rather than ids.
      int16_t v = conn->version<FetchApi>(12);
      FetchRequest req;
      req.replica_id = -1;
      req.max_wait_ms = options_.max_wait_ms;
      req.min_bytes = options_.min_bytes;
      req.max_bytes = options_.max_bytes;
      req.isolation_level = options_.isolation_level;
      req.session_id = 0;
      req.session_epoch = -1;
      FetchRequest::FetchTopic t;
      t.topic = topic_;
      for (int32_t p : parts) {
        FetchRequest::FetchTopic::FetchPartition fp;
        fp.partition = p;
        fp.fetch_offset = positions_[p];
        fp.partition_max_bytes = options_.partition_max_bytes;
        t.partitions.push_back(fp);
      }
      req.topics.push_back(t);
      sent.push_back({conn, conn->send<FetchApi>(req, v), v});
    } catch (const ConnectError&) {
      retry = true;
    }
  }
  bool keep_going = true;
  for (const auto& s : sent) {
    FetchResponse resp;
    try {
      resp = s.conn->receive<FetchApi>(s.correlation_id, s.version, std::chrono::milliseconds(options_.max_wait_ms));
    } catch (const ConnectError&) {
      retry = true;
      continue;
    }
    if (resp.error_code) check(resp.error_code, "Fetch from " + topic_);
    for (const auto& t : resp.responses) {
      for (const auto& pd : t.partitions) {
        int32_t p = pd.partition_index;
        if (!positions_.count(p)) continue;
        if (pd.error_code == 1) {
          // OFFSET_OUT_OF_RANGE: the position left the log (retention, truncation).
          positions_[p] = list_offsets(cluster_, topic_, {p}, options_.reset_to, options_.isolation_level)[p];
          continue;
        }
        if (pd.error_code) {
          if (!is_retriable(pd.error_code)) check(pd.error_code, "Fetch from " + topic_ + "/" + std::to_string(p));
          retry = true;
          continue;
        }
        end_[p] = options_.isolation_level == 1 && pd.last_stable_offset >= 0 ? pd.last_stable_offset
                                                                                : pd.high_watermark;
        if (keep_going && !deliver(p, pd, on_record)) keep_going = false;
      }
    }
  }
  if (retry) {
    cluster_.forget_all();
    std::this_thread::sleep_for(cluster_.config().retry_backoff());
  }
  return keep_going;
}

bool Fetcher::deliver(int32_t partition, const PartitionData& pd,
                      const std::function<bool(const ConsumedRecord&)>& on_record) {
  if (pd.records.is_null() || pd.records.size() == 0) return true;
  ByteView bytes = pd.records.bytes();
  bytes_fetched_ += bytes.size();
  int64_t& position = positions_[partition];
  // Aborted transactions in first-offset order; a producer's batches are
  // dropped from its first aborted offset until its ABORT marker.
  std::vector<std::pair<int64_t, int64_t>> aborted;  // first offset, producer id
  if (options_.isolation_level == 1 && pd.aborted_transactions)
    for (const auto& a : *pd.aborted_transactions) aborted.emplace_back(a.first_offset, a.producer_id);
  std::sort(aborted.begin(), aborted.end());
  size_t next_aborted = 0;
  std::set<int64_t> aborted_producers;

  records::BatchIterator it(bytes);
  ConsumedRecord out;
  out.topic = topic_;
  out.partition = partition;
  while (auto batch = it.next()) {
    const auto& h = batch->header;
    if (h.last_offset() < position) continue;
    if (options_.isolation_level == 1) {
      while (next_aborted < aborted.size() && aborted[next_aborted].first <= h.last_offset())
        aborted_producers.insert(aborted[next_aborted++].second);
      if (h.is_control()) {
        auto marker = records::read_end_txn_marker(batch->bytes, h);
        if (marker && !marker->commit()) aborted_producers.erase(h.producer_id);
      } else if (h.is_transactional() && aborted_producers.count(h.producer_id)) {
        position = h.last_offset() + 1;
        continue;
      }
    }
    if (h.is_control()) {
      position = h.last_offset() + 1;
      continue;
    }
    records::BatchRecordReader reader(batch->bytes, h, 64u << 20);
    records::Record r;
    while (reader.next(r)) {
      int64_t offset = h.base_offset + r.offset_delta;
      if (offset < position) continue;
      out.offset = offset;
      out.timestamp_ms = h.log_append_time() ? h.max_timestamp : h.base_timestamp + r.timestamp_delta;
      auto sv = [](ByteView v) { return std::string_view(reinterpret_cast<const char*>(v.data()), v.size()); };
      out.key = r.key ? std::optional<std::string_view>(sv(*r.key)) : std::nullopt;
      out.value = r.value ? std::optional<std::string_view>(sv(*r.value)) : std::nullopt;
      out.headers.clear();
      for (const auto& hd : r.headers)
        out.headers.emplace_back(hd.key, hd.value ? std::optional<std::string_view>(sv(*hd.value)) : std::nullopt);
      position = offset + 1;
      if (!on_record(out)) return false;
    }
    if (!reader.status().ok())
      throw KafkaError(2, "reading " + topic_ + "/" + std::to_string(partition) + " at offset " +
                              std::to_string(h.base_offset), "a batch's records cannot be decoded");
    // Compaction may leave the batch's last offsets without records.
    position = std::max(position, h.last_offset() + 1);
  }
  return true;
}

}  // namespace runnel::cli
