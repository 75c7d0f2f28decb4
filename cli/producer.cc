#include "cli/producer.h"

#include <set>
#include <thread>

#include "cli/kafka_errors.h"
#include "protocol/messages/00_produce.h"
#include "protocol/messages/22_init_producer_id.h"
#include "protocol/records/batch_builder.h"

namespace runnel::cli {

using namespace protocol;
using records::Compression;
using Clock = std::chrono::steady_clock;

namespace {

ByteView view_of(const std::string& s) { return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Bytes a record adds to a batch, near enough for batch.size: its fields
// plus the varints and attributes around them.
size_t estimated_size(const ProducerRecord& r) {
  size_t n = 16 + (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0);
  for (const auto& [k, v] : r.headers) n += 8 + k.size() + (v ? v->size() : 0);
  return n;
}

}  // namespace

Compression parse_compression(const std::string& name) {
  if (name == "none") return Compression::none;
  if (name == "gzip") return Compression::gzip;
  if (name == "snappy") return Compression::snappy;
  if (name == "lz4") return Compression::lz4;
  if (name == "zstd") return Compression::zstd;
  throw UsageError("compression is none, gzip, snappy, lz4 or zstd, got '" + name + "'");
}

Producer::Producer(Cluster& cluster, ProducerOptions options) : cluster_(cluster), options_(options) {
  if (options_.idempotent) init_producer_id();
}

void Producer::init_producer_id() {
  InitProducerIdRequest req;
  req.transactional_id = std::nullopt;
  req.transaction_timeout_ms = 60000;
  auto resp = cluster_.with_retries([&] {
    auto& conn = cluster_.any();
    auto r = conn.call<InitProducerIdApi>(req, conn.version<InitProducerIdApi>());
    check(r.error_code, "InitProducerId");
    return r;
  });
  producer_id_ = resp.producer_id;
  producer_epoch_ = resp.producer_epoch;
}

int32_t Producer::partition_count(const std::string& topic) {
  auto it = partition_counts_.find(topic);
  if (it != partition_counts_.end()) return it->second;
  auto info = cluster_.with_retries([&] { return cluster_.topic(topic); });
  int32_t n = static_cast<int32_t>(info.partitions.size());
  if (n == 0) throw KafkaError(5, "topic '" + topic + "'", "it has no partitions yet");
  partition_counts_[topic] = n;
  return n;
}

int32_t Producer::choose_partition(const ProducerRecord& r) {
  int32_t n = partition_count(r.topic);
  if (r.partition) {
    if (*r.partition < 0 || *r.partition >= n)
      throw KafkaError(3, "partition " + r.topic + "/" + std::to_string(*r.partition),
                       "the topic has " + std::to_string(n) + " partitions");
    return *r.partition;
  }
  if (r.key) return partition_for_key(view_of(*r.key), n);
  return sticky_.current(r.topic, n);
}

void Producer::send(ProducerRecord record) {
  PartitionKey key{record.topic, choose_partition(record)};
  size_t size = estimated_size(record);
  auto it = open_.find(key);
  if (it != open_.end() && it->second.bytes + size > options_.batch_size) {
    seal(key);
    it = open_.end();
  }
  if (it == open_.end()) {
    Batch b;
    b.topic = key.first;
    b.partition = key.second;
    b.opened = Clock::now();
    it = open_.emplace(key, std::move(b)).first;
  }
  int64_t ts = record.timestamp_ms >= 0 ? record.timestamp_ms : now_ms();
  it->second.records.push_back({std::move(record.key), std::move(record.value), std::move(record.headers), ts});
  it->second.bytes += size;
  if (it->second.bytes >= options_.batch_size) seal(key);
  poll();
}

std::optional<std::chrono::milliseconds> Producer::time_to_linger() const {
  std::optional<Clock::time_point> oldest;
  for (const auto& [k, b] : open_)
    if (!oldest || b.opened < *oldest) oldest = b.opened;
  if (!oldest) return std::nullopt;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*oldest + options_.linger - Clock::now());
  return std::max(left, std::chrono::milliseconds(0));
}

void Producer::poll() {
  seal_lingered(false);
  // Unlike the Java producer, sends happen on this thread, between records.
  if (!sealed_.empty()) send_round();
}

void Producer::flush() {
  seal_lingered(true);
  while (!sealed_.empty() || !rounds_.empty()) {
    if (sealed_.empty())
      collect();
    else
      send_round();
  }
}

void Producer::seal_lingered(bool all) {
  auto now = Clock::now();
  std::vector<PartitionKey> due;
  for (const auto& [k, b] : open_)
    if (all || b.opened + options_.linger <= now) due.push_back(k);
  for (const auto& k : due) seal(k);
}

void Producer::seal(const PartitionKey& key) {
  auto it = open_.find(key);
  if (it == open_.end()) return;
  Batch b = std::move(it->second);
  open_.erase(it);
  std::vector<records::Record> recs(b.records.size());
  int64_t base_ts = b.records.front().timestamp_ms;
  for (size_t i = 0; i < b.records.size(); ++i) {
    const auto& o = b.records[i];
    auto& r = recs[i];
    r.offset_delta = static_cast<int32_t>(i);
    r.timestamp_delta = o.timestamp_ms - base_ts;
    if (o.key) r.key = view_of(*o.key);
    if (o.value) r.value = view_of(*o.value);
    for (const auto& [hk, hv] : o.headers) {
      records::RecordHeader h;
      h.key = hk;
      if (hv) h.value = view_of(*hv);
      r.headers.push_back(h);
    }
  }
  records::BatchSpec spec;
  spec.compression = options_.compression;
  spec.base_timestamp = base_ts;
  if (options_.idempotent) {
    int32_t& seq = next_sequence_[key];
    spec.producer_id = producer_id_;
    spec.producer_epoch = producer_epoch_;
    spec.base_sequence = seq;
    // Sequences wrap at INT32_MAX back to 0.
    seq = static_cast<int32_t>((static_cast<int64_t>(seq) + static_cast<int64_t>(recs.size())) % (int64_t{1} << 31));
  }
  b.built = records::build_batch(spec, recs);
  b.sealed_at = Clock::now();
  sticky_.next(key.first, partition_count(key.first));
  sealed_.push_back(std::move(b));
}

void Producer::retry_or_fail(Batch&& b, int16_t code, const std::string& message, std::vector<Batch>& retry) {
  if (!is_retriable(code) || ++b.attempts > options_.retries ||
      Clock::now() - b.sealed_at > options_.delivery_timeout) {
    std::string where = "producing to " + b.topic + "/" + std::to_string(b.partition);
    // NETWORK_EXCEPTION stands for a lost connection: exit code 3, not 1.
    if (code == 13) throw ConnectError(where + ": " + message);
    throw KafkaError(code, where, message);
  }
  retry.push_back(std::move(b));
}

void Producer::requeue(std::vector<Batch>& retry) {
  if (retry.empty()) return;
  // Retried batches go first, ahead of later batches of their partitions.
  for (auto it = retry.rbegin(); it != retry.rend(); ++it) sealed_.push_front(std::move(*it));
  // Older rounds still in flight hold earlier batches: collecting them puts
  // any that failed ahead of these. Connections are forgotten (and metadata
  // asked again) only once nothing is in flight on them.
  if (!rounds_.empty()) collect();
  cluster_.forget_all();
  int attempts = 0;
  for (const auto& b : sealed_) attempts = std::max(attempts, b.attempts);
  cluster_.backoff(std::max(0, attempts - 1));
}

void Producer::settle(Batch&& b, int16_t code, const std::string& message, std::vector<Batch>& retry,
                      std::set<PartitionKey>& failed) {
  PartitionKey key{b.topic, b.partition};
  // DUPLICATE_SEQUENCE_NUMBER: an earlier attempt was written already.
  if (code == 0 || code == 46) {
    records_sent_ += b.records.size();
    bytes_sent_ += b.built.size();
    return;
  }
  // Behind a failed batch of its partition, OUT_OF_ORDER_SEQUENCE_NUMBER
  // only says the earlier one is missing: retry both, in order.
  if (code == 45 && failed.count(key)) code = 13;
  failed.insert(key);
  retry_or_fail(std::move(b), code, message, retry);
}

void Producer::collect(size_t keep) {
  std::vector<Batch> retry;
  std::set<PartitionKey> failed;
  while (!rounds_.empty() && (rounds_.size() > keep || !retry.empty())) {
    std::vector<InFlight> round = std::move(rounds_.front());
    rounds_.pop_front();
    for (auto& f : round) {
      if (options_.acks == 0) {
        // No answer comes for acks=0: sent is as far as the producer knows.
        for (auto& b : f.batches) settle(std::move(b), 0, "", retry, failed);
        continue;
      }
      ProduceResponse resp;
      try {
        resp = f.conn->receive<ProduceApi>(f.correlation_id, f.version);
      } catch (const ConnectError& e) {
        for (auto& b : f.batches) settle(std::move(b), 13, e.what(), retry, failed);  // NETWORK_EXCEPTION
        continue;
      }
      for (auto& b : f.batches) {
        const ProduceResponse::TopicProduceResponse::PartitionProduceResponse* pr = nullptr;
        for (const auto& t : resp.responses)
          if (t.name == b.topic)
            for (const auto& p : t.partition_responses)
              if (p.index == b.partition) pr = &p;
        if (!pr)
          settle(std::move(b), 13, "no answer for the partition in the Produce response", retry, failed);
        else
          settle(std::move(b), pr->error_code, pr->error_message.value_or(""), retry, failed);
      }
    }
  }
  requeue(retry);
}

void Producer::send_round() {
  collect(options_.max_in_flight - 1);
  std::vector<Batch> retry;
  std::vector<InFlight> round;
  // Take at most one batch per partition, in order; the rest wait a round.
  std::set<PartitionKey> taken;
  std::deque<Batch> later;
  while (!sealed_.empty()) {
    Batch b = std::move(sealed_.front());
    sealed_.pop_front();
    PartitionKey key{b.topic, b.partition};
    if (!taken.insert(key).second) {
      later.push_back(std::move(b));
      continue;
    }
    BrokerConnection* conn = nullptr;
    try {
      conn = &cluster_.leader(b.topic, b.partition);
    } catch (const KafkaError& e) {
      retry_or_fail(std::move(b), e.code(), e.what(), retry);
      continue;
    } catch (const ConnectError& e) {
      retry_or_fail(std::move(b), 13, e.what(), retry);
      continue;
    }
    auto f = std::find_if(round.begin(), round.end(), [&](const InFlight& x) { return x.conn == conn; });
    if (f == round.end()) {
      round.push_back({conn, {}});
      f = round.end() - 1;
    }
    f->batches.push_back(std::move(b));
  }
  for (auto it = later.rbegin(); it != later.rend(); ++it) sealed_.push_front(std::move(*it));

  for (auto f = round.begin(); f != round.end();) {
    try {
      f->version = f->conn->version<ProduceApi>(12);
      ProduceRequest req;
      req.acks = options_.acks;
      req.timeout_ms = static_cast<int32_t>(cluster_.config().request_timeout().count());
      for (const auto& b : f->batches) {
        auto t = std::find_if(req.topic_data.begin(), req.topic_data.end(), [&](auto& x) { return x.name == b.topic; });
        if (t == req.topic_data.end()) {
          req.topic_data.emplace_back();
          t = req.topic_data.end() - 1;
          t->name = b.topic;
        }
        ProduceRequest::TopicProduceData::PartitionProduceData p;
        p.index = b.partition;
        p.records = Records::view(ByteView(b.built.data(), b.built.size()));
        t->partition_data.push_back(std::move(p));
      }
      f->correlation_id = f->conn->send<ProduceApi>(req, f->version);
      ++f;
    } catch (const ConnectError& e) {
      for (auto& b : f->batches) retry_or_fail(std::move(b), 13, e.what(), retry);
      f = round.erase(f);
    }
  }
  if (!round.empty()) rounds_.push_back(std::move(round));
  requeue(retry);
}

}  // namespace runnel::cli
