// Real-client bytes: the requests librdkafka 2.0.2 actually sends.
//
// The first test runs a small capture broker on 127.0.0.1 that answers with
// Runnel's generated codec just well enough to lead librdkafka's producers
// (every compression codec, and an idempotent one) and a group consumer
// through a whole session. Every request frame it receives is kept; the test
// then checks that each decodes with our header and message types at its
// version, leaves nothing over and re-encodes to exactly the same bytes, and
// that every record of every produced batch is what the producer was given.
//
// With RUNNEL_WRITE_FIXTURES=DIR the test also writes a selection of the
// frames to DIR; they are committed under protocol/testdata/librdkafka-2.0.2
// and the second test checks them without running librdkafka.
#include <arpa/inet.h>
#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protocol/header.h"
#include "protocol/messages/all_apis.h"
#include "protocol/records/batch_reader.h"
#include "protocol/records/compression.h"
#include "protocol/records/validate.h"

using namespace runnel::protocol;
namespace rec = runnel::protocol::records;
using Clock = std::chrono::steady_clock;

namespace {

// ---------------------------------------------------------------------------
// What the producers send. Deterministic, so the committed fixtures can be
// checked record by record too.

struct ProduceCase {
  const char* topic;
  const char* codec;  // librdkafka's compression.codec
  rec::Compression compression;
  bool idempotent;
};

constexpr ProduceCase kCases[] = {
    {"t-none", "none", rec::Compression::none, false},
    {"t-gzip", "gzip", rec::Compression::gzip, false},
    {"t-snappy", "snappy", rec::Compression::snappy, false},
    {"t-lz4", "lz4", rec::Compression::lz4, false},
    {"t-zstd", "zstd", rec::Compression::zstd, false},
    {"t-idempotent", "none", rec::Compression::none, true},
};
constexpr int kNumCases = static_cast<int>(std::size(kCases));
constexpr int kRecordsPerCase = 6;
constexpr int kPartitions = 2;
constexpr int32_t kNodeId = 1;
constexpr int64_t kProducerId = 4242;

int case_index(std::string_view topic) {
  for (int i = 0; i < kNumCases; ++i)
    if (topic == kCases[i].topic) return i;
  return -1;
}

std::string fixture_produce_name(int c) {
  return std::string("produce-v7-") + (kCases[c].idempotent ? "idempotent" : kCases[c].codec) + ".bin";
}

struct ExpectedHeader {
  std::string key;
  std::optional<std::string> value;
  bool operator==(const ExpectedHeader&) const = default;
};

struct ExpectedRecord {
  int32_t partition = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<ExpectedHeader> headers;
  int64_t timestamp = 0;
};

// Record i of case c: null key (i 2), empty key (i 5), null value (i 4),
// compressible values, null and empty and binary header values, and one
// timestamp earlier than the batch's first (i 3).
ExpectedRecord expected_record(int c, int i) {
  const ProduceCase& pc = kCases[c];
  ExpectedRecord r;
  r.partition = i % kPartitions;
  if (i == 5)
    r.key = std::string();
  else if (i != 2)
    r.key = "key-" + std::string(pc.topic) + "-" + std::to_string(i);
  if (i != 4) {
    std::string v;
    for (int k = 0; k < 24; ++k) v += "value " + std::to_string(i) + " of " + pc.topic + "; ";
    r.value = v;
  }
  r.headers.push_back({"idx", std::to_string(i)});
  r.headers.push_back({"codec", pc.codec});
  if (i % 2 == 1) r.headers.push_back({"nil", std::nullopt});
  if (i == 0) {
    r.headers.push_back({"empty", std::string()});
    r.headers.push_back({"bin", std::string("\x00\x01\xff\x7f", 4)});
  }
  r.timestamp = 1700000000000 + c * 1000 + i * 7 - (i == 3 ? 50 : 0);
  return r;
}

std::string str_of(ByteView v) { return {reinterpret_cast<const char*>(v.data()), v.size()}; }
std::optional<std::string> opt_str(const std::optional<ByteView>& v) {
  if (!v) return std::nullopt;
  return str_of(*v);
}
std::string show(const std::optional<std::string>& s) { return s ? "\"" + *s + "\"" : "null"; }
ByteView view_of(const Bytes& b) { return {b.data(), b.size()}; }

// ---------------------------------------------------------------------------
// Codec checks shared by both tests.

// Calls f(Api{}) for the API with this key; false if the codec lacks it.
template <typename F>
bool visit_api(int16_t key, F&& f) {
  bool found = false;
  for_each_api([&](auto api) {
    if (!found && decltype(api)::key == key) {
      found = true;
      f(api);
    }
  });
  return found;
}

std::string api_name(int16_t key) {
  std::string name = "api " + std::to_string(key);
  visit_api(key, [&](auto api) { name = decltype(api)::name; });
  return name;
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Decodes a size-stripped request frame (header and body) with our codec and
// re-encodes it; empty on success, else what went wrong.
std::string check_frame(ByteView frame) {
  auto peek = peek_header(frame);
  if (!peek) return "frame shorter than a request header";
  std::string problem;
  bool known = visit_api(peek->api_key, [&](auto api) {
    using Api = decltype(api);
    const int16_t v = peek->api_version;
    if (v < Api::min_version || v > Api::max_version) {
      problem = "version " + std::to_string(v) + " outside the codec's range";
      return;
    }
    const int16_t hv = request_header_version(Api::is_flexible(v));
    Reader r(frame);
    RequestHeader header;
    header.decode(r, hv);
    if (!r.ok()) {
      problem = std::string("header v") + std::to_string(hv) + ": " + r.error();
      return;
    }
    const size_t header_size = frame.size() - r.remaining();
    typename Api::Request req;
    req.decode(r, v);
    if (!r.ok()) {
      problem = std::string("body: ") + r.error();
      return;
    }
    if (r.remaining() != 0) {
      problem = std::to_string(r.remaining()) + " bytes left over after the body";
      return;
    }
    if (req.size(v) != frame.size() - header_size) {
      problem = "size() says " + std::to_string(req.size(v)) + ", body is " +
                std::to_string(frame.size() - header_size);
      return;
    }
    Bytes out;
    Writer w(out);
    header.encode(w, hv);
    req.encode(w, v);
    if (out.size() != frame.size() || !std::equal(out.begin(), out.end(), frame.begin())) {
      size_t at = 0;
      while (at < out.size() && at < frame.size() && out[at] == frame[at]) ++at;
      problem = "re-encoding differs at byte " + std::to_string(at) + " (captured " +
                std::to_string(frame.size()) + " bytes, re-encoded " + std::to_string(out.size()) + ")";
    }
  });
  if (!known) return "api key " + std::to_string(peek->api_key) + " unknown to the codec";
  return problem;
}

// What the Produce checks found across frames.
struct ProduceTally {
  std::map<std::string, std::multiset<int>> seen;  // topic -> record indexes
  std::set<rec::Compression> codecs;
  std::vector<std::string> problems;
};

void check_batch(const std::string& topic, int32_t partition, ByteView batch, ProduceTally& tally) {
  auto problem = [&](const std::string& what) {
    tally.problems.push_back(topic + "/" + std::to_string(partition) + ": " + what);
  };
  const int c = case_index(topic);
  if (c < 0) return problem("unexpected topic");
  const ProduceCase& pc = kCases[c];

  rec::ValidateOptions options;
  options.from_client = true;
  options.walk_records = true;
  auto status = rec::validate_batch(batch, options);
  if (!status.ok()) return problem("validate_batch: " + status.message);

  rec::BatchRecordReader reader(batch, rec::kDefaultMaxDecompressedBytes);
  if (!reader.status().ok()) return problem("BatchRecordReader: " + reader.status().message);
  const rec::BatchHeader& h = reader.header();
  tally.codecs.insert(h.compression());
  // librdkafka sends a batch uncompressed when compressing did not shrink
  // it (a small batch); the check that every codec was seen at least once
  // (each codec is used by one topic only) catches a codec silently off.
  if (h.compression() != pc.compression && h.compression() != rec::Compression::none)
    problem(std::string("codec ") + rec::compression_name(h.compression()) + ", expected " + pc.codec);
  if (h.log_append_time()) problem("LogAppendTime set by a producer");
  if (h.is_transactional() || h.is_control()) problem("transactional or control batch");
  if (pc.idempotent) {
    if (h.producer_id != kProducerId || h.producer_epoch != 0 || h.base_sequence < 0)
      problem("idempotent batch with producerId " + std::to_string(h.producer_id) + " epoch " +
              std::to_string(h.producer_epoch) + " sequence " + std::to_string(h.base_sequence));
  } else if (h.producer_id != -1 || h.base_sequence != -1) {
    problem("non-idempotent batch with producerId " + std::to_string(h.producer_id));
  }

  int64_t max_ts = INT64_MIN;
  rec::Record r;
  while (reader.next(r)) {
    const int64_t ts = h.base_timestamp + r.timestamp_delta;
    max_ts = std::max(max_ts, ts);
    if (r.headers.empty() || r.headers[0].key != "idx" || !r.headers[0].value) {
      problem("record without an idx header");
      continue;
    }
    const int i = std::atoi(str_of(*r.headers[0].value).c_str());
    if (i < 0 || i >= kRecordsPerCase) {
      problem("record index " + std::to_string(i) + " out of range");
      continue;
    }
    tally.seen[topic].insert(i);
    const ExpectedRecord want = expected_record(c, i);
    const std::string at = "record " + std::to_string(i) + ": ";
    if (want.partition != partition) problem(at + "in partition " + std::to_string(partition));
    if (opt_str(r.key) != want.key) problem(at + "key " + show(opt_str(r.key)) + ", expected " + show(want.key));
    if (opt_str(r.value) != want.value)
      problem(at + "value " + show(opt_str(r.value)) + ", expected " + show(want.value));
    if (ts != want.timestamp)
      problem(at + "timestamp " + std::to_string(ts) + ", expected " + std::to_string(want.timestamp));
    std::vector<ExpectedHeader> got;
    for (const auto& hd : r.headers) got.push_back({std::string(hd.key), opt_str(hd.value)});
    if (got != want.headers) problem(at + "headers differ");
  }
  if (!reader.status().ok()) return problem("reading records: " + reader.status().message);
  if (reader.records_read() != h.records_count)
    problem("read " + std::to_string(reader.records_read()) + " of " + std::to_string(h.records_count) + " records");
  if (h.records_count > 0 && h.max_timestamp != max_ts)
    problem("maxTimestamp " + std::to_string(h.max_timestamp) + ", records' maximum " + std::to_string(max_ts));
}

// Checks every batch of a captured Produce frame (already known to decode).
void check_produce_frame(ByteView frame, ProduceTally& tally) {
  auto peek = peek_header(frame);
  Reader r(frame);
  RequestHeader header;
  header.decode(r, request_header_version(ProduceApi::is_flexible(peek->api_version)));
  ProduceRequest req;
  req.decode(r, peek->api_version);
  if (!r.ok()) return tally.problems.push_back("Produce frame does not decode");
  for (const auto& t : req.topic_data) {
    for (const auto& p : t.partition_data) {
      if (p.records.is_null()) {
        tally.problems.push_back(t.name + ": null records");
        continue;
      }
      rec::BatchIterator it(p.records.bytes());
      int batches = 0;
      while (auto b = it.next()) {
        ++batches;
        check_batch(t.name, p.index, b->bytes, tally);
      }
      if (it.error() || it.partial_bytes() || it.position() != p.records.size() || batches == 0)
        tally.problems.push_back(t.name + ": records are not whole batches");
    }
  }
}

// The topics a Produce frame writes to.
std::set<std::string> produce_topics(ByteView frame) {
  std::set<std::string> out;
  auto peek = peek_header(frame);
  Reader r(frame);
  RequestHeader header;
  header.decode(r, request_header_version(ProduceApi::is_flexible(peek->api_version)));
  ProduceRequest req;
  req.decode(r, peek->api_version);
  for (const auto& t : req.topic_data) out.insert(t.name);
  return out;
}

// ---------------------------------------------------------------------------
// The capture broker.

struct Frame {
  int16_t api_key = 0;
  int16_t api_version = 0;
  Bytes bytes;  // without the int32 size
};

struct Advertised {
  int16_t key, min, max;
};

// Realistic ranges; each must lie inside the codec's (checked at start).
constexpr Advertised kAdvertised[] = {
    {0, 0, 9},    // Produce: min 0, or librdkafka 2.0.2 disables gzip/snappy/lz4
    {1, 4, 12},   // Fetch
    {2, 1, 7},    // ListOffsets
    {3, 0, 12},   // Metadata
    {8, 2, 8},    // OffsetCommit
    {9, 1, 8},    // OffsetFetch
    {10, 0, 4},   // FindCoordinator
    {11, 0, 7},   // JoinGroup
    {12, 0, 4},   // Heartbeat
    {13, 0, 4},   // LeaveGroup
    {14, 0, 5},   // SyncGroup
    {18, 0, 3},   // ApiVersions
    {22, 0, 4},   // InitProducerId
};

class CaptureBroker {
 public:
  CaptureBroker() {
    for (const auto& a : kAdvertised) {
      bool inside = false;
      visit_api(a.key, [&](auto api) {
        using Api = decltype(api);
        inside = a.min >= Api::min_version && a.max <= Api::max_version;
      });
      if (!inside) error("advertised range of " + api_name(a.key) + " is outside the codec's");
    }
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 16) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      error(std::string("cannot listen: ") + std::strerror(errno));
      return;
    }
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~CaptureBroker() { stop(); }
  CaptureBroker(const CaptureBroker&) = delete;
  CaptureBroker& operator=(const CaptureBroker&) = delete;

  int port() const { return port_; }

  void stop() {
    if (stopped_.exchange(true)) return;
    stop_ = true;
    if (accept_thread_.joinable()) accept_thread_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mu_);
      threads.swap(conn_threads_);
    }
    for (auto& t : threads) t.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
  }

  std::vector<Frame> frames() const {
    std::lock_guard lock(mu_);
    return frames_;
  }
  std::vector<std::string> errors() const {
    std::lock_guard lock(mu_);
    return errors_;
  }
  bool saw(int16_t key) const {
    std::lock_guard lock(mu_);
    for (const auto& f : frames_)
      if (f.api_key == key) return true;
    return false;
  }

 private:
  void error(std::string what) {
    std::lock_guard lock(mu_);
    errors_.push_back(std::move(what));
  }

  void accept_loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      std::lock_guard lock(mu_);
      conn_threads_.emplace_back([this, fd] { serve(fd); });
    }
  }

  static bool send_all(int fd, const Bytes& b) {
    size_t off = 0;
    while (off < b.size()) {
      ssize_t n = ::send(fd, b.data() + off, b.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  void serve(int fd) {
    Bytes buf;
    std::vector<uint8_t> tmp(64 * 1024);
    bool open = true;
    while (open && !stop_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      ssize_t got = ::recv(fd, tmp.data(), tmp.size(), 0);
      if (got <= 0) break;
      buf.insert(buf.end(), tmp.begin(), tmp.begin() + got);
      while (open && buf.size() >= 4) {
        const int64_t size = static_cast<int32_t>((uint32_t{buf[0]} << 24) | (uint32_t{buf[1]} << 16) |
                                                  (uint32_t{buf[2]} << 8) | uint32_t{buf[3]});
        if (size < 8 || size > (64 << 20)) {
          error("bad frame size " + std::to_string(size));
          open = false;
          break;
        }
        if (buf.size() < static_cast<size_t>(4 + size)) break;
        Bytes frame(buf.begin() + 4, buf.begin() + 4 + size);
        buf.erase(buf.begin(), buf.begin() + 4 + size);
        Bytes response;
        if (!handle(frame, response) || (!response.empty() && !send_all(fd, response))) open = false;
      }
    }
    ::close(fd);
  }

  // Records the frame, decodes it with our codec and builds the response
  // (left empty when none is due). False closes the connection.
  bool handle(const Bytes& frame, Bytes& out) {
    auto peek = peek_header(view_of(frame));
    {
      std::lock_guard lock(mu_);
      frames_.push_back({peek->api_key, peek->api_version, frame});
    }
    bool ok = false;
    bool known = visit_api(peek->api_key, [&](auto api) {
      using Api = decltype(api);
      const int16_t v = peek->api_version;
      const std::string what = std::string(Api::name) + " v" + std::to_string(v);
      if (v < Api::min_version || v > Api::max_version) return error(what + ": outside the codec's range");
      Reader r(view_of(frame));
      RequestHeader header;
      header.decode(r, request_header_version(Api::is_flexible(v)));
      typename Api::Request req;
      req.decode(r, v);
      if (!r.ok() || r.remaining() != 0) return error(what + ": does not decode");
      typename Api::Response resp;
      bool send = true;
      if (!respond(req, resp, v, send)) return error(what + ": the capture broker has no answer");
      ok = true;
      if (!send) return;
      Writer w(out);
      w.i32(0);
      ResponseHeader rh;
      rh.correlation_id = header.correlation_id;
      rh.encode(w, response_header_version(Api::key, Api::is_flexible(v)));
      resp.encode(w, v);
      const uint32_t size = static_cast<uint32_t>(out.size() - 4);
      for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(size >> (24 - 8 * i));
    });
    if (!known) error("unknown api key " + std::to_string(peek->api_key));
    return ok;
  }

  // --- answers -----------------------------------------------------------

  template <typename Req, typename Resp>
  bool respond(const Req&, Resp&, int16_t, bool&) {
    return false;
  }

  bool respond(const ApiVersionsRequest&, ApiVersionsResponse& resp, int16_t, bool&) {
    for (const auto& a : kAdvertised) {
      ApiVersionsResponse::ApiVersion av;
      av.api_key = a.key;
      av.min_version = a.min;
      av.max_version = a.max;
      resp.api_keys.push_back(av);
    }
    return true;
  }

  bool respond(const MetadataRequest& req, MetadataResponse& resp, int16_t, bool&) {
    MetadataResponse::MetadataResponseBroker b;
    b.node_id = kNodeId;
    b.host = "127.0.0.1";
    b.port = port_;
    resp.brokers.push_back(b);
    resp.cluster_id = "runnel-capture";
    resp.controller_id = kNodeId;
    std::vector<std::string> names;
    if (req.topics) {
      for (const auto& t : *req.topics)
        if (t.name) names.push_back(*t.name);
    } else {
      for (const auto& pc : kCases) names.push_back(pc.topic);
    }
    for (const auto& name : names) {
      MetadataResponse::MetadataResponseTopic t;
      t.name = name;
      if (case_index(name) < 0) {
        t.error_code = 3;  // UNKNOWN_TOPIC_OR_PARTITION
      } else {
        for (int32_t p = 0; p < kPartitions; ++p) {
          MetadataResponse::MetadataResponseTopic::MetadataResponsePartition mp;
          mp.partition_index = p;
          mp.leader_id = kNodeId;
          mp.leader_epoch = 0;
          mp.replica_nodes = {kNodeId};
          mp.isr_nodes = {kNodeId};
          t.partitions.push_back(mp);
        }
      }
      resp.topics.push_back(t);
    }
    return true;
  }

  bool respond(const InitProducerIdRequest&, InitProducerIdResponse& resp, int16_t, bool&) {
    resp.producer_id = kProducerId;
    resp.producer_epoch = 0;
    return true;
  }

  bool respond(const ProduceRequest& req, ProduceResponse& resp, int16_t, bool& send) {
    send = req.acks != 0;
    std::lock_guard lock(mu_);
    for (const auto& td : req.topic_data) {
      ProduceResponse::TopicProduceResponse tr;
      tr.name = td.name;
      for (const auto& pd : td.partition_data) {
        ProduceResponse::TopicProduceResponse::PartitionProduceResponse pr;
        pr.index = pd.index;
        if (case_index(td.name) < 0 || pd.index < 0 || pd.index >= kPartitions || pd.records.is_null()) {
          pr.error_code = 3;
          pr.base_offset = -1;
        } else {
          auto& log = logs_[{td.name, pd.index}];
          pr.base_offset = log.next_offset;
          pr.log_start_offset = 0;
          rec::BatchIterator it(pd.records.bytes());
          while (auto b = it.next()) {
            Bytes copy(b->bytes.begin(), b->bytes.end());
            rec::set_base_offset(copy.data(), log.next_offset);
            log.next_offset += b->header.last_offset_delta + 1;
            log.batches.push_back(std::move(copy));
          }
        }
        tr.partition_responses.push_back(pr);
      }
      resp.responses.push_back(tr);
    }
    return true;
  }

  bool respond(const FetchRequest& req, FetchResponse& resp, int16_t, bool&) {
    size_t total = 0;
    {
      std::lock_guard lock(mu_);
      for (const auto& t : req.topics) {
        FetchResponse::FetchableTopicResponse tr;
        tr.topic = t.topic;
        for (const auto& p : t.partitions) {
          FetchResponse::FetchableTopicResponse::PartitionData pd;
          pd.partition_index = p.partition;
          pd.aborted_transactions = std::nullopt;
          pd.log_start_offset = 0;
          auto it = logs_.find({t.topic, p.partition});
          if (case_index(t.topic) < 0 || p.partition < 0 || p.partition >= kPartitions) {
            pd.error_code = 3;
            pd.records = Records::copy_of({});
          } else {
            const Log empty;
            const Log& log = it == logs_.end() ? empty : it->second;
            pd.high_watermark = log.next_offset;
            pd.last_stable_offset = log.next_offset;
            Bytes data;
            for (const auto& b : log.batches) {
              auto h = rec::read_batch_header(view_of(b));
              if (h && h->last_offset() >= p.fetch_offset) data.insert(data.end(), b.begin(), b.end());
            }
            total += data.size();
            pd.records = Records::copy_of(view_of(data));
          }
          tr.partitions.push_back(std::move(pd));
        }
        resp.responses.push_back(std::move(tr));
      }
    }
    if (total == 0) {  // nothing new: wait a little, as a broker would
      auto until = Clock::now() + std::chrono::milliseconds(std::min(req.max_wait_ms, 100));
      while (!stop_ && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  bool respond(const ListOffsetsRequest& req, ListOffsetsResponse& resp, int16_t, bool&) {
    std::lock_guard lock(mu_);
    for (const auto& t : req.topics) {
      ListOffsetsResponse::ListOffsetsTopicResponse tr;
      tr.name = t.name;
      for (const auto& p : t.partitions) {
        ListOffsetsResponse::ListOffsetsTopicResponse::ListOffsetsPartitionResponse pr;
        pr.partition_index = p.partition_index;
        auto it = logs_.find({t.name, p.partition_index});
        pr.offset = (p.timestamp == -1 && it != logs_.end()) ? it->second.next_offset : 0;
        pr.timestamp = -1;
        tr.partitions.push_back(pr);
      }
      resp.topics.push_back(tr);
    }
    return true;
  }

  bool respond(const FindCoordinatorRequest& req, FindCoordinatorResponse& resp, int16_t v, bool&) {
    if (v <= 3) {
      resp.error_message = std::nullopt;
      resp.node_id = kNodeId;
      resp.host = "127.0.0.1";
      resp.port = port_;
    } else {
      for (const auto& key : req.coordinator_keys) {
        FindCoordinatorResponse::Coordinator c;
        c.key = key;
        c.node_id = kNodeId;
        c.host = "127.0.0.1";
        c.port = port_;
        c.error_message = std::nullopt;
        resp.coordinators.push_back(c);
      }
    }
    return true;
  }

  bool respond(const JoinGroupRequest& req, JoinGroupResponse& resp, int16_t v, bool&) {
    if (req.protocols.empty()) return false;
    std::lock_guard lock(mu_);
    std::string member = req.member_id.empty() ? "rdk-member-" + std::to_string(++member_seq_) : req.member_id;
    resp.generation_id = ++generation_;
    if (v >= 7) resp.protocol_type = req.protocol_type;
    resp.protocol_name = req.protocols[0].name;
    resp.leader = member;
    resp.member_id = member;
    JoinGroupResponse::JoinGroupResponseMember m;
    m.member_id = member;
    m.group_instance_id = req.group_instance_id;
    m.metadata = req.protocols[0].metadata;
    resp.members.push_back(m);
    return true;
  }

  bool respond(const SyncGroupRequest& req, SyncGroupResponse& resp, int16_t, bool&) {
    resp.protocol_type = req.protocol_type;
    resp.protocol_name = req.protocol_name;
    for (const auto& a : req.assignments)
      if (a.member_id == req.member_id) resp.assignment = a.assignment;
    return true;
  }

  bool respond(const HeartbeatRequest&, HeartbeatResponse&, int16_t, bool&) { return true; }

  bool respond(const LeaveGroupRequest& req, LeaveGroupResponse& resp, int16_t, bool&) {
    for (const auto& m : req.members) {
      LeaveGroupResponse::MemberResponse mr;
      mr.member_id = m.member_id;
      mr.group_instance_id = m.group_instance_id;
      resp.members.push_back(mr);
    }
    return true;
  }

  bool respond(const OffsetFetchRequest& req, OffsetFetchResponse& resp, int16_t v, bool&) {
    auto all_partitions = [] {
      std::vector<int32_t> ps;
      for (int32_t p = 0; p < kPartitions; ++p) ps.push_back(p);
      return ps;
    };
    if (v <= 7) {
      if (!req.topics) return true;  // "all topics": none committed
      for (const auto& t : *req.topics) {
        OffsetFetchResponse::OffsetFetchResponseTopic tr;
        tr.name = t.name;
        for (int32_t p : t.partition_indexes.empty() ? all_partitions() : t.partition_indexes) {
          OffsetFetchResponse::OffsetFetchResponseTopic::OffsetFetchResponsePartition pr;
          pr.partition_index = p;
          pr.committed_offset = -1;
          pr.metadata = "";
          tr.partitions.push_back(pr);
        }
        resp.topics.push_back(tr);
      }
    } else {
      for (const auto& g : req.groups) {
        OffsetFetchResponse::OffsetFetchResponseGroup gr;
        gr.group_id = g.group_id;
        if (g.topics) {
          for (const auto& t : *g.topics) {
            OffsetFetchResponse::OffsetFetchResponseGroup::OffsetFetchResponseTopics tr;
            tr.name = t.name;
            for (int32_t p : t.partition_indexes) {
              OffsetFetchResponse::OffsetFetchResponseGroup::OffsetFetchResponseTopics::OffsetFetchResponsePartitions pr;
              pr.partition_index = p;
              pr.committed_offset = -1;
              tr.partitions.push_back(pr);
            }
            gr.topics.push_back(tr);
          }
        }
        resp.groups.push_back(gr);
      }
    }
    return true;
  }

  bool respond(const OffsetCommitRequest& req, OffsetCommitResponse& resp, int16_t, bool&) {
    for (const auto& t : req.topics) {
      OffsetCommitResponse::OffsetCommitResponseTopic tr;
      tr.name = t.name;
      for (const auto& p : t.partitions) {
        OffsetCommitResponse::OffsetCommitResponseTopic::OffsetCommitResponsePartition pr;
        pr.partition_index = p.partition_index;
        tr.partitions.push_back(pr);
      }
      resp.topics.push_back(tr);
    }
    return true;
  }

  struct Log {
    std::vector<Bytes> batches;  // base offsets assigned
    int64_t next_offset = 0;
  };

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> stopped_{false};
  std::thread accept_thread_;
  mutable std::mutex mu_;
  std::vector<std::thread> conn_threads_;
  std::vector<Frame> frames_;
  std::vector<std::string> errors_;
  std::map<std::pair<std::string, int32_t>, Log> logs_;
  int member_seq_ = 0;
  int32_t generation_ = 0;
};

// ---------------------------------------------------------------------------
// librdkafka clients.

struct RdDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using RdKafka = std::unique_ptr<rd_kafka_t, RdDeleter>;

struct Delivery {
  int ok = 0;
  int failed = 0;
  std::string first_error;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* d = static_cast<Delivery*>(opaque);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++d->ok;
  } else {
    if (d->failed++ == 0) d->first_error = rd_kafka_err2str(m->err);
  }
}

std::mutex g_log_mu;
std::vector<std::string> g_client_log;

void on_log(const rd_kafka_t*, int level, const char* fac, const char* buf) {
  std::lock_guard lock(g_log_mu);
  g_client_log.push_back(std::to_string(level) + " " + fac + ": " + buf);
}

std::string client_log_tail() {
  std::lock_guard lock(g_log_mu);
  std::string s;
  size_t from = g_client_log.size() > 40 ? g_client_log.size() - 40 : 0;
  for (size_t i = from; i < g_client_log.size(); ++i) s += g_client_log[i] + "\n";
  return s;
}

rd_kafka_conf_t* base_conf(const std::string& bootstrap) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  auto set = [&](const char* k, const std::string& v) {
    if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) FAIL(k << ": " << err);
  };
  set("bootstrap.servers", bootstrap);
  set("client.id", "runnel-capture");
  set("broker.address.family", "v4");
  set("socket.timeout.ms", "10000");
  set("log_level", "6");
  rd_kafka_conf_set_log_cb(conf, on_log);
  return conf;
}

void conf_set(rd_kafka_conf_t* conf, const char* k, const std::string& v) {
  char err[512];
  if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) FAIL(k << ": " << err);
}

RdKafka make_producer(const std::string& bootstrap, const ProduceCase& pc, Delivery* delivery) {
  rd_kafka_conf_t* conf = base_conf(bootstrap);
  conf_set(conf, "compression.codec", pc.codec);
  conf_set(conf, "enable.idempotence", pc.idempotent ? "true" : "false");
  conf_set(conf, "acks", "all");
  conf_set(conf, "linger.ms", "50");
  conf_set(conf, "message.timeout.ms", "10000");
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_conf_set_opaque(conf, delivery);
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) FAIL("rd_kafka_new: " << err);
  return RdKafka(rk);
}

void produce_case(rd_kafka_t* rk, int c) {
  for (int i = 0; i < kRecordsPerCase; ++i) {
    const ExpectedRecord r = expected_record(c, i);
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(r.headers.size());
    for (const auto& h : r.headers)
      rd_kafka_header_add(hdrs, h.key.data(), static_cast<ssize_t>(h.key.size()), h.value ? h.value->data() : nullptr,
                          h.value ? h.value->size() : 0);
    // The macros cast their arguments, so pass plain variables.
    const void* key = r.key ? r.key->data() : nullptr;
    const size_t key_len = r.key ? r.key->size() : 0;
    void* value = r.value ? const_cast<char*>(r.value->data()) : nullptr;
    const size_t value_len = r.value ? r.value->size() : 0;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(kCases[c].topic), RD_KAFKA_V_PARTITION(r.partition),
        RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_VALUE(value, value_len),
        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_TIMESTAMP(r.timestamp), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_END);
    if (err) {
      rd_kafka_headers_destroy(hdrs);
      FAIL("producev " << kCases[c].topic << " #" << i << ": " << rd_kafka_err2str(err));
    }
  }
}

// Compares a message the consumer received with what was produced.
std::string check_consumed(const rd_kafka_message_t* m) {
  const std::string topic = rd_kafka_topic_name(m->rkt);
  const int c = case_index(topic);
  if (c < 0) return "message from unexpected topic " + topic;
  rd_kafka_headers_t* hdrs = nullptr;
  std::vector<ExpectedHeader> got;
  if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name;
    const void* val;
    size_t size;
    for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i)
      got.push_back({name, val ? std::optional<std::string>(std::string(static_cast<const char*>(val), size))
                               : std::nullopt});
  }
  if (got.empty() || got[0].key != "idx" || !got[0].value) return topic + ": message without idx header";
  const int i = std::atoi(got[0].value->c_str());
  if (i < 0 || i >= kRecordsPerCase) return topic + ": bad idx";
  const ExpectedRecord want = expected_record(c, i);
  auto opt = [](const void* p, size_t n) {
    return p ? std::optional<std::string>(std::string(static_cast<const char*>(p), n)) : std::nullopt;
  };
  const std::string at = topic + " record " + std::to_string(i) + ": ";
  if (m->partition != want.partition) return at + "partition";
  if (opt(m->key, m->key_len) != want.key) return at + "key " + show(opt(m->key, m->key_len));
  if (opt(m->payload, m->len) != want.value) return at + "value";
  if (got != want.headers) return at + "headers";
  rd_kafka_timestamp_type_t tstype;
  if (rd_kafka_message_timestamp(m, &tstype) != want.timestamp || tstype != RD_KAFKA_TIMESTAMP_CREATE_TIME)
    return at + "timestamp";
  return {};
}

void write_file(const std::filesystem::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

Bytes read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The request versions librdkafka 2.0.2 picks against kAdvertised:
// min(client max, broker max) (PROTOCOL-NOTES 1a).
const std::map<int16_t, int16_t> kExpectedVersions = {
    {18, 3}, {3, 4}, {22, 4}, {0, 7}, {10, 2}, {11, 5}, {14, 3},
    {12, 3}, {9, 7}, {2, 2},  {1, 11}, {8, 7}, {13, 1},
};

}  // namespace

TEST_CASE("librdkafka 2.0.2 requests decode and re-encode byte for byte", "[librdkafka]") {
  CaptureBroker broker;
  REQUIRE(broker.errors().empty());
  const std::string bootstrap = "127.0.0.1:" + std::to_string(broker.port());

  // Producers: one per codec and an idempotent one, all at once.
  {
    std::vector<Delivery> deliveries(kNumCases);
    std::vector<RdKafka> producers;
    for (int c = 0; c < kNumCases; ++c) producers.push_back(make_producer(bootstrap, kCases[c], &deliveries[c]));
    for (int c = 0; c < kNumCases; ++c) produce_case(producers[c].get(), c);
    const auto flush_deadline = Clock::now() + std::chrono::seconds(10);
    for (int c = 0; c < kNumCases; ++c) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(flush_deadline - Clock::now()).count();
      rd_kafka_flush(producers[c].get(), static_cast<int>(std::max<int64_t>(left, 0)));
      INFO(kCases[c].topic << " (" << kCases[c].codec << "): " << deliveries[c].first_error << "\n"
                           << client_log_tail());
      CHECK(rd_kafka_outq_len(producers[c].get()) == 0);
      CHECK(deliveries[c].ok == kRecordsPerCase);
      CHECK(deliveries[c].failed == 0);
    }
  }
  REQUIRE(broker.errors().empty());

  // A group consumer reads everything back, commits, and leaves.
  {
    rd_kafka_conf_t* conf = base_conf(bootstrap);
    conf_set(conf, "group.id", "runnel-capture-group");
    conf_set(conf, "auto.offset.reset", "earliest");
    conf_set(conf, "enable.auto.commit", "false");
    conf_set(conf, "session.timeout.ms", "6000");
    conf_set(conf, "heartbeat.interval.ms", "200");
    conf_set(conf, "fetch.wait.max.ms", "100");
    char err[512];
    RdKafka consumer(rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err));
    REQUIRE(consumer);
    rd_kafka_poll_set_consumer(consumer.get());
    rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(kNumCases);
    for (const auto& pc : kCases) rd_kafka_topic_partition_list_add(topics, pc.topic, RD_KAFKA_PARTITION_UA);
    REQUIRE(rd_kafka_subscribe(consumer.get(), topics) == RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(topics);

    int consumed = 0;
    std::vector<std::string> problems;
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    while (consumed < kNumCases * kRecordsPerCase && Clock::now() < deadline) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 100);
      if (!m) continue;
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++consumed;
        if (auto p = check_consumed(m); !p.empty()) problems.push_back(p);
      } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        problems.push_back(std::string("consumer error: ") + rd_kafka_message_errstr(m));
      }
      rd_kafka_message_destroy(m);
    }
    // Stay in the group until a heartbeat has gone out.
    const auto hb_deadline = Clock::now() + std::chrono::seconds(3);
    while (!broker.saw(HeartbeatApi::key) && Clock::now() < hb_deadline)
      if (auto* m = rd_kafka_consumer_poll(consumer.get(), 50)) rd_kafka_message_destroy(m);
    INFO(client_log_tail());
    CHECK(consumed == kNumCases * kRecordsPerCase);
    CHECK(problems == std::vector<std::string>{});
    CHECK(rd_kafka_commit(consumer.get(), nullptr, 0) == RD_KAFKA_RESP_ERR_NO_ERROR);
    CHECK(rd_kafka_consumer_close(consumer.get()) == RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  broker.stop();
  CHECK(broker.errors() == std::vector<std::string>{});
  const std::vector<Frame> frames = broker.frames();

  // Every frame: header and body decode at their versions, nothing is left
  // over, and re-encoding gives back the captured bytes.
  std::map<int16_t, std::set<int16_t>> versions;
  for (size_t i = 0; i < frames.size(); ++i) {
    const Frame& f = frames[i];
    versions[f.api_key].insert(f.api_version);
    INFO("frame " << i << ": " << api_name(f.api_key) << " v" << f.api_version << ", " << f.bytes.size()
                  << " bytes");
    CHECK(check_frame(view_of(f.bytes)) == "");
  }

  // librdkafka sent every API we meant to capture, at the version it picks.
  for (const auto& [key, version] : kExpectedVersions) {
    INFO(api_name(key));
    CHECK(versions[key] == std::set<int16_t>{version});
  }

  // Every produced record arrived intact, and every codec was really used.
  ProduceTally tally;
  for (const auto& f : frames)
    if (f.api_key == ProduceApi::key) check_produce_frame(view_of(f.bytes), tally);
  CHECK(tally.problems == std::vector<std::string>{});
  for (int c = 0; c < kNumCases; ++c) {
    INFO(kCases[c].topic);
    std::multiset<int> all;
    for (int i = 0; i < kRecordsPerCase; ++i) all.insert(i);
    CHECK(tally.seen[kCases[c].topic] == all);
  }
  CHECK(tally.codecs == std::set<rec::Compression>{rec::Compression::none, rec::Compression::gzip,
                                                   rec::Compression::snappy, rec::Compression::lz4,
                                                   rec::Compression::zstd});

  // RUNNEL_WRITE_FIXTURES=DIR: keep the largest frame of each API and
  // version (the one with the most in it), for Produce of each topic.
  if (const char* dir = std::getenv("RUNNEL_WRITE_FIXTURES")) {
    std::filesystem::create_directories(dir);
    std::map<std::string, const Frame*> chosen;
    for (const auto& f : frames) {
      if (f.api_key == ProduceApi::key) {
        auto topics = produce_topics(view_of(f.bytes));
        if (topics.size() != 1 || case_index(*topics.begin()) < 0) continue;
        auto& slot = chosen[fixture_produce_name(case_index(*topics.begin()))];
        if (!slot || slot->bytes.size() < f.bytes.size()) slot = &f;
      } else {
        auto& slot = chosen[lower(api_name(f.api_key)) + "-v" + std::to_string(f.api_version) + ".bin"];
        if (!slot || slot->bytes.size() < f.bytes.size()) slot = &f;
      }
    }
    for (const auto& [name, f] : chosen) write_file(std::filesystem::path(dir) / name, f->bytes);
  }
}

TEST_CASE("committed librdkafka 2.0.2 frames decode and re-encode byte for byte", "[librdkafka]") {
  const std::filesystem::path dir = std::filesystem::path(RUNNEL_TESTDATA) / "librdkafka-2.0.2";
  std::set<std::string> names;
  ProduceTally tally;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".bin") continue;
    const std::string name = entry.path().filename().string();
    names.insert(name);
    const Bytes bytes = read_file(entry.path());
    INFO(name);
    REQUIRE(check_frame(view_of(bytes)) == "");
    auto peek = peek_header(view_of(bytes));
    const std::string prefix = lower(api_name(peek->api_key)) + "-v" + std::to_string(peek->api_version);
    CHECK(name.rfind(prefix, 0) == 0);  // the name says what the frame is
    if (peek->api_key == ProduceApi::key) {
      auto topics = produce_topics(view_of(bytes));
      REQUIRE(topics.size() == 1);
      CHECK(fixture_produce_name(case_index(*topics.begin())) == name);
      check_produce_frame(view_of(bytes), tally);
    }
  }
  CHECK(tally.problems == std::vector<std::string>{});
  CHECK(tally.codecs == std::set<rec::Compression>{rec::Compression::none, rec::Compression::gzip,
                                                   rec::Compression::snappy, rec::Compression::lz4,
                                                   rec::Compression::zstd});
  for (const char* required :
       {"apiversions-v3.bin", "metadata-v4.bin", "initproducerid-v4.bin", "produce-v7-none.bin",
        "produce-v7-gzip.bin", "produce-v7-snappy.bin", "produce-v7-lz4.bin", "produce-v7-zstd.bin",
        "produce-v7-idempotent.bin", "findcoordinator-v2.bin", "joingroup-v5.bin", "syncgroup-v3.bin",
        "heartbeat-v3.bin", "offsetfetch-v7.bin", "listoffsets-v2.bin", "fetch-v11.bin", "offsetcommit-v7.bin",
        "leavegroup-v1.bin"}) {
    INFO(required);
    CHECK(names.count(required) == 1);
  }
}
