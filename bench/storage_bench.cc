// Storage numbers (issue 3), a plain program rather than Google Benchmark
// because each number is a comparison made in the same run:
//
//  1. Append throughput of 1 MiB and of 16 KiB batches through Log::append,
//     as a ratio against write(2) of the same bytes to a plain file in the
//     same directory (goal: at least 0.9). No fsync in either: both measure
//     the path to the page cache.
//  2. Group commit: 8 threads each append a 1 KiB batch and wait in
//     Log::sync() (acks=all), for a few seconds: fsyncs per second against
//     acknowledged appends per second.
//
//   storage_bench [dir] [MiB per append run]   (dir defaults to $TMPDIR or /tmp)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "protocol/records/batch_builder.h"
#include "storage/log.h"

using namespace runnel;
namespace rec = protocol::records;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One batch of `size` bytes in total: records of at most 64 KiB each.
protocol::Bytes make_batch(size_t size) {
  std::string value(std::min<size_t>(size, 64 << 10), 'v');
  std::vector<rec::Record> records;
  size_t total = rec::kHeaderSize;
  while (total < size) {
    rec::Record r;
    r.offset_delta = static_cast<int32_t>(records.size());
    size_t room = size - total;
    size_t len = room > value.size() + 16 ? value.size() : (room > 16 ? room - 16 : 1);
    r.value = protocol::ByteView(reinterpret_cast<const uint8_t*>(value.data()), len);
    total += rec::record_size(r);
    records.push_back(r);
  }
  rec::BatchSpec spec;
  spec.base_timestamp = 1700000000000;
  return rec::build_batch(spec, records);
}

void drop(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::remove_all(p, ec);
}

double plain_write(const std::filesystem::path& file, const protocol::Bytes& batch, size_t count) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) std::abort();
  auto t = Clock::now();
  for (size_t i = 0; i < count; ++i)
    if (::write(fd, batch.data(), batch.size()) != static_cast<ssize_t>(batch.size())) std::abort();
  double s = seconds_since(t);
  ::fdatasync(fd);  // as Log::close() does, so that each round starts from the same page cache state
  ::close(fd);
  drop(file);
  return s;
}

double log_append(const std::filesystem::path& dir, protocol::Bytes batch, size_t count) {
  storage::LogConfig config;  // Kafka's defaults: 1 GiB segments, no flush.messages/flush.ms
  auto log = storage::Log::open(dir, config, {});
  if (!log) std::abort();
  auto t = Clock::now();
  for (size_t i = 0; i < count; ++i)
    if (!(*log)->append(std::span<uint8_t>(batch.data(), batch.size()), 0)) std::abort();
  double s = seconds_since(t);
  (void)(*log)->close();
  log->reset();
  drop(dir);
  return s;
}

void append_ratio(const std::filesystem::path& root, size_t batch_size, size_t total_mib) {
  protocol::Bytes batch = make_batch(batch_size);
  size_t count = (total_mib << 20) / batch.size();
  double best_plain = 1e9, best_log = 1e9;
  for (int round = 0; round < 3; ++round) {  // alternate, keep each side's best
    best_plain = std::min(best_plain, plain_write(root / "plain.bin", batch, count));
    best_log = std::min(best_log, log_append(root / "bench-0", batch, count));
  }
  double mib = static_cast<double>(count * batch.size()) / (1 << 20);
  std::printf("append %6zu-byte batches x %zu: write(2) %7.0f MiB/s, Log::append %7.0f MiB/s, ratio %.2f\n",
              batch.size(), count, mib / best_plain, mib / best_log, best_plain / best_log);
}

void group_commit(const std::filesystem::path& root, int threads, double duration_s) {
  auto log = storage::Log::open(root / "sync-0", storage::LogConfig{}, {});
  if (!log) std::abort();
  storage::Log& l = **log;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> acked{0};
  uint64_t syncs_before = l.sync_count();
  std::vector<std::thread> pool;
  auto t = Clock::now();
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&] {
      protocol::Bytes batch = make_batch(1024);
      while (!stop.load(std::memory_order_relaxed)) {
        if (!l.append(std::span<uint8_t>(batch.data(), batch.size()), 0)) std::abort();
        if (l.sync()) std::abort();
        acked.fetch_add(1, std::memory_order_relaxed);
      }
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(duration_s));
  stop = true;
  for (auto& th : pool) th.join();
  double s = seconds_since(t);
  double syncs = static_cast<double>(l.sync_count() - syncs_before);
  std::printf("group commit, %d appenders waiting for sync: %.0f fsyncs/s, %.0f acknowledged appends/s (%.2f appends per fsync)\n",
              threads, syncs / s, static_cast<double>(acked) / s, static_cast<double>(acked) / std::max(syncs, 1.0));
  (void)l.close();
  log->reset();
  drop(root / "sync-0");
}

}  // namespace

int main(int argc, char** argv) {
  const char* tmp = std::getenv("TMPDIR");
  std::filesystem::path base = argc > 1 ? argv[1] : (tmp ? tmp : "/tmp");
  size_t mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 256;
  std::filesystem::path root = base / ("runnel-storage-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root);
  append_ratio(root, 1 << 20, mib);
  append_ratio(root, 16 << 10, mib);
  group_commit(root, 1, 2.0);
  group_commit(root, 8, 3.0);
  drop(root);
  return 0;
}
