// Codec micro-benchmarks: what it costs to take a Produce request off the
// wire, against the cost of merely copying its bytes.
//
//   produce_v{9,7}/decode_only       RequestHeader + ProduceRequest::decode
//   produce_v{9,7}/decode+validate   ... then validate_batch on every batch,
//                                    CRC and header rules only (the broker's
//                                    hot path for uncompressed batches)
//   produce_v{9,7}/decode+walk       ... validate_batch with walk_records:
//                                    every record decoded as well
//   crc32c                           crc32c() over the v9 request's bytes
//   crc32c/per_batch                 compute_batch_crc() on each of its batches
//   memcpy                           memcpy of the v9 request's bytes
//
// Every benchmark reports bytes/s over the bytes of the request frame (the
// part after the 4-byte size prefix), so each rate divides directly by
// memcpy's. After the usual output, the ratios are printed (medians when
// run with --benchmark_repetitions).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"
#include "protocol/header.h"
#include "protocol/messages/00_produce.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_format.h"
#include "protocol/records/batch_reader.h"
#include "protocol/records/record.h"
#include "protocol/records/validate.h"

namespace {

namespace proto = runnel::protocol;
namespace rec = runnel::protocol::records;

// The shape of the request: roughly what a producer without compression
// sends when it has plenty queued (librdkafka-style 16 KiB batches).
constexpr size_t kRequestTarget = 1u << 20;  // the whole frame, about 1 MiB
constexpr size_t kBatchMax = 16u << 10;      // each batch at most 16 KiB
constexpr int kPartitions = 6;
constexpr size_t kKeySize = 10;
constexpr size_t kValueSize = 100;
constexpr size_t kFrameOverheadAllowance = 512;  // header, topic, partition framing

// Deterministic filler so runs are comparable (xorshift64*).
struct Filler {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545f4914f6cdd1dull;
  }
  void fill(uint8_t* p, size_t n) {
    static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(kAlphabet[next() % (sizeof kAlphabet - 1)]);
  }
};

struct Payload {
  std::vector<proto::Bytes> batches[kPartitions];
  size_t batch_count = 0;
  size_t record_count = 0;
  size_t batch_bytes = 0;
};

// Batches of up to kBatchMax bytes, handed to the partitions in turn, until
// the request would pass kRequestTarget.
const Payload& payload() {
  static const Payload p = [] {
    Payload p;
    Filler fill;
    // Scratch for the next record; each record's own copy lives in `store`.
    std::vector<uint8_t> key(kKeySize), value(kValueSize);
    const size_t budget = kRequestTarget - kFrameOverheadAllowance;
    int64_t timestamp = 1'700'000'000'000;
    int partition = 0;
    uint64_t seq = 0;
    while (p.batch_bytes + rec::kHeaderSize + 200 < budget) {
      const size_t cap = std::min(kBatchMax, budget - p.batch_bytes);
      // Records point into `store`, so it must not reallocate while they live.
      std::vector<proto::Bytes> store;
      store.reserve(2 * (cap / (kKeySize + kValueSize) + 1));
      std::vector<rec::Record> records;
      size_t size = rec::kHeaderSize;
      int64_t base_timestamp = timestamp;
      for (;;) {
        char k[kKeySize + 1];
        std::snprintf(k, sizeof k, "key-%06llu", static_cast<unsigned long long>(seq % 1'000'000));
        std::memcpy(key.data(), k, kKeySize);
        fill.fill(value.data(), kValueSize);
        rec::Record r;
        r.timestamp_delta = timestamp - base_timestamp;
        r.offset_delta = static_cast<int32_t>(records.size());
        store.push_back(key);
        r.key = proto::ByteView(store.back());
        store.push_back(value);
        r.value = proto::ByteView(store.back());
        size_t rs = rec::record_size(r);
        if (size + rs > cap) break;
        size += rs;
        records.push_back(std::move(r));
        ++seq;
        if (seq % 16 == 0) ++timestamp;  // a few records per millisecond
      }
      if (records.empty()) break;
      rec::BatchSpec spec;
      spec.base_timestamp = base_timestamp;
      auto batch = rec::build_batch(spec, records);
      p.batch_bytes += batch.size();
      p.record_count += records.size();
      ++p.batch_count;
      p.batches[partition].push_back(std::move(batch));
      partition = (partition + 1) % kPartitions;
    }
    return p;
  }();
  return p;
}

// The request frame for `version`: request header then body, without the
// 4-byte size prefix (the connection reads that first).
proto::Bytes make_frame(int16_t version) {
  const Payload& p = payload();
  std::vector<proto::Bytes> joined(kPartitions);
  for (int i = 0; i < kPartitions; ++i)
    for (const auto& b : p.batches[i]) joined[i].insert(joined[i].end(), b.begin(), b.end());

  proto::ProduceRequest req;
  req.acks = -1;
  req.timeout_ms = 30000;
  auto& topic = req.topic_data.emplace_back();
  topic.name = "bench-topic";
  for (int i = 0; i < kPartitions; ++i) {
    auto& part = topic.partition_data.emplace_back();
    part.index = i;
    part.records = proto::Records::view(joined[i]);
  }
  proto::RequestHeader header;
  header.api_key = proto::ProduceApi::key;
  header.api_version = version;
  header.correlation_id = 42;
  header.client_id = "rdkafka";

  proto::Bytes frame;
  proto::Writer w(frame);
  header.encode(w, proto::request_header_version(proto::ProduceApi::is_flexible(version)));
  req.encode(w, version);
  return frame;
}

const proto::Bytes& frame(int16_t version) {
  static std::map<int16_t, std::shared_ptr<const proto::Bytes>> frames;
  auto& f = frames[version];
  if (!f) f = std::make_shared<const proto::Bytes>(make_frame(version));
  return *f;
}

enum class Mode { decode_only, validate, walk };

// What the broker does with a Produce frame before it appends: decode the
// header and the request (records stay views into the frame), then split
// each partition's records into batches and validate each one.
void BM_Produce(benchmark::State& state, int16_t version, Mode mode) {
  // The frame is owned by a shared_ptr as the connection's is: decoded
  // Records hold a reference to it.
  auto owned = std::make_shared<proto::Bytes>(frame(version));
  const uint8_t* data = owned->data();
  const size_t size = owned->size();
  rec::ValidateOptions options;
  options.walk_records = mode == Mode::walk;
  const int16_t header_version = proto::request_header_version(proto::ProduceApi::is_flexible(version));

  size_t batches = 0;
  for (auto _ : state) {
    auto peek = proto::peek_header(proto::ByteView(data, size));
    if (!peek || peek->api_version != version) return state.SkipWithError("peek_header failed");
    proto::Reader reader(data, size, owned);
    proto::RequestHeader header;
    header.decode(reader, header_version);
    proto::ProduceRequest request;
    request.decode(reader, version);
    if (!reader.ok() || reader.remaining() != 0) return state.SkipWithError("decode failed");
    batches = 0;
    if (mode != Mode::decode_only) {
      for (const auto& topic : request.topic_data) {
        for (const auto& part : topic.partition_data) {
          rec::BatchIterator it(part.records.bytes());
          while (auto batch = it.next()) {
            auto status = rec::validate_batch(batch->bytes, options);
            if (!status.ok()) return state.SkipWithError(status.message.c_str());
            ++batches;
          }
          if (it.error() || it.partial_bytes()) return state.SkipWithError("batch framing failed");
        }
      }
    }
    benchmark::DoNotOptimize(request);
    benchmark::DoNotOptimize(batches);
  }
  if (mode != Mode::decode_only && batches != payload().batch_count)
    return state.SkipWithError("not every batch was validated");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
  state.counters["frame_bytes"] = static_cast<double>(size);
}

void BM_Crc32c(benchmark::State& state) {
  const proto::Bytes& src = frame(9);
  for (auto _ : state) {
    uint32_t crc = rec::crc32c(src);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(src.size()));
}

// crc32c over each batch of the request separately (from attributes on, as
// validate_batch does): the floor under decode+validate.
void BM_Crc32cPerBatch(benchmark::State& state) {
  const proto::Bytes& src = frame(9);
  std::vector<proto::ByteView> batches;
  for (const auto& part : payload().batches)
    for (const auto& b : part) batches.emplace_back(b);
  for (auto _ : state) {
    for (auto b : batches) {
      uint32_t crc = rec::compute_batch_crc(b);
      benchmark::DoNotOptimize(crc);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(src.size()));
}

void BM_Memcpy(benchmark::State& state) {
  const proto::Bytes& src = frame(9);
  proto::Bytes dst(src.size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(src.data());
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(src.size()));
}

void register_benchmarks() {
  for (int16_t v : {int16_t{9}, int16_t{7}}) {
    const std::string prefix = "produce_v" + std::to_string(v);
    benchmark::RegisterBenchmark((prefix + "/decode_only").c_str(), BM_Produce, v, Mode::decode_only);
    benchmark::RegisterBenchmark((prefix + "/decode+validate").c_str(), BM_Produce, v, Mode::validate);
    benchmark::RegisterBenchmark((prefix + "/decode+walk").c_str(), BM_Produce, v, Mode::walk);
  }
  benchmark::RegisterBenchmark("crc32c", BM_Crc32c);
  benchmark::RegisterBenchmark("crc32c/per_batch", BM_Crc32cPerBatch);
  benchmark::RegisterBenchmark("memcpy", BM_Memcpy);
}

// Forwards to the usual display reporter, remembering each benchmark's
// bytes/s, and prints every rate as a fraction of memcpy's at the end.
class RatioReporter : public benchmark::BenchmarkReporter {
 public:
  explicit RatioReporter(benchmark::BenchmarkReporter* inner) : inner_(inner) {}

  bool ReportContext(const Context& context) override { return inner_->ReportContext(context); }

  void ReportRuns(const std::vector<Run>& runs) override {
    inner_->ReportRuns(runs);
    for (const auto& run : runs) {
      if (run.error_occurred) continue;
      auto it = run.counters.find("bytes_per_second");
      if (it == run.counters.end()) continue;
      const std::string name = run.run_name.str();
      const Sample sample{it->second.value, run.GetAdjustedCPUTime() * seconds_per(run.time_unit)};
      if (run.run_type == Run::RT_Iteration) {
        if (order_.insert({name, order_.size()}).second) names_.push_back(name);
        samples_[name].push_back(sample);
      } else if (run.aggregate_name == "median") {
        if (order_.insert({name, order_.size()}).second) names_.push_back(name);
        median_[name] = sample;
      }
    }
  }

  void Finalize() override {
    inner_->Finalize();
    const double memcpy_rate = median("memcpy").bytes_per_second;
    if (memcpy_rate <= 0) return;
    // Plain text on stdout under the console reporter; on stderr when stdout
    // carries JSON or CSV.
    std::FILE* out = dynamic_cast<benchmark::ConsoleReporter*>(inner_) ? stdout : stderr;
    std::fflush(stdout);
    size_t reps = 0;
    for (auto& [name, s] : samples_) reps = std::max(reps, s.size());
    std::fprintf(out, "\nAgainst memcpy (%s, CPU time):\n",
                 reps > 1 || !median_.empty() ? "medians over repetitions" : "single run");
    std::fprintf(out, "  %-28s %12s %10s %10s\n", "benchmark", "us/request", "GiB/s", "/ memcpy");
    for (const auto& name : names_) {
      const Sample m = median(name);
      if (m.bytes_per_second <= 0) continue;
      std::fprintf(out, "  %-28s %12.2f %10.2f %10.3f\n", name.c_str(), m.cpu_seconds * 1e6,
                   m.bytes_per_second / (1u << 30), m.bytes_per_second / memcpy_rate);
    }
    std::fflush(out);
  }

 private:
  struct Sample {
    double bytes_per_second = 0;
    double cpu_seconds = 0;  // per iteration
  };

  static double seconds_per(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond: return 1e-9;
      case benchmark::kMicrosecond: return 1e-6;
      case benchmark::kMillisecond: return 1e-3;
      default: return 1;
    }
  }

  // The library's median aggregate when it computed one, else the median of
  // the repetitions seen (each field on its own).
  Sample median(const std::string& name) const {
    if (auto it = median_.find(name); it != median_.end()) return it->second;
    auto it = samples_.find(name);
    if (it == samples_.end() || it->second.empty()) return {};
    auto mid = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      size_t n = v.size();
      return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    };
    std::vector<double> rates, times;
    for (const auto& s : it->second) {
      rates.push_back(s.bytes_per_second);
      times.push_back(s.cpu_seconds);
    }
    return {mid(rates), mid(times)};
  }

  benchmark::BenchmarkReporter* inner_;
  std::vector<std::string> names_;
  std::map<std::string, size_t> order_;
  std::map<std::string, std::vector<Sample>> samples_;
  std::map<std::string, Sample> median_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  const Payload& p = payload();
  benchmark::AddCustomContext(
      "produce_request",
      std::to_string(p.record_count) + " records (key " + std::to_string(kKeySize) + " B, value " +
          std::to_string(kValueSize) + " B) in " + std::to_string(p.batch_count) +
          " uncompressed batches of <= " + std::to_string(kBatchMax) + " B over " + std::to_string(kPartitions) +
          " partitions; frame " + std::to_string(frame(9).size()) + " B (v9), " + std::to_string(frame(7).size()) +
          " B (v7)");
  register_benchmarks();

  // The default reporter honours --benchmark_format; the library owns it.
  RatioReporter reporter(benchmark::CreateDefaultDisplayReporter());
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
