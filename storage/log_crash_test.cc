// Crash test: a child process appends and syncs in a loop and reports every
// acknowledged (synced) batch through a pipe; the parent SIGKILLs it at a
// random moment, reopens the log, and checks that it holds every
// acknowledged batch, in order, with no gap and no duplicate.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "storage/log_manager.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

const TopicPartition kPartition{"crash", 0};

LogManagerOptions manager_options(const fs::path& dir) {
  LogManagerOptions o;
  o.log_dirs = {dir};
  o.default_config.segment_bytes = 4096;
  o.default_config.index_interval_bytes = 512;
  o.default_config.retention_ms = -1;  // every batch must stay to be checked
  return o;
}

// Batch `seq` has 1 + seq % 3 records, so offsets and sequence numbers differ.
Bytes seq_batch(uint64_t seq) { return batch_of(1 + static_cast<int>(seq % 3), seq, 24 + seq % 50); }

// The child: never returns.
[[noreturn]] void append_and_sync_forever(const fs::path& dir, int fd, uint32_t seed) {
  auto fail = [fd] {
    uint64_t bad = UINT64_MAX;
    (void)!::write(fd, &bad, sizeof bad);
    ::_exit(1);
  };
  auto manager = LogManager::open(manager_options(dir));
  if (!manager) fail();
  auto log = (*manager)->get_or_create(kPartition, manager_options(dir).default_config);
  if (!log) fail();
  // Continue the sequence after the last batch that survived.
  uint64_t seq = 0;
  if ((*log)->log_end_offset() > 0) {
    auto r = (*log)->read((*log)->log_end_offset() - 1, 1);
    if (!r) fail();
    auto b = parse_batches(read_region(r->records));
    if (b.size() != 1) fail();
    seq = b[0].tag + 1;
  }
  std::mt19937 rng(seed);
  for (;; ++seq) {
    Bytes b = seq_batch(seq);
    if (!append(**log, b, 0)) fail();
    if ((*log)->sync()) fail();
    if (::write(fd, &seq, sizeof seq) != sizeof seq) fail();
    if (rng() % 8 == 0 && (*manager)->checkpoint()) fail();
    if (rng() % 16 == 0 && !(*log)->delete_old_segments()) fail();
  }
}

}  // namespace

TEST_CASE("SIGKILL at random points never loses a synced batch", "[storage]") {
  TempDir tmp;
  std::mt19937 rng(20240601);
  int64_t acked_max = -1;  // the highest acknowledged sequence number
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int rounds = 0;
  size_t segments = 0;
  for (; rounds < 20 && std::chrono::steady_clock::now() < deadline; ++rounds) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    uint32_t seed = static_cast<uint32_t>(rng());
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fds[0]);
      append_and_sync_forever(tmp.path, fds[1], seed);
    }
    ::close(fds[1]);
    // Let it run 0-100 ms after its first acknowledgement, then kill it.
    uint64_t seq;
    REQUIRE(::read(fds[0], &seq, sizeof seq) == sizeof seq);
    REQUIRE(seq != UINT64_MAX);
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 100000));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFSIGNALED(status));
    // Everything written to the pipe before the kill was acknowledged. (A
    // round may start past acked_max + 1: unacknowledged batches survive a
    // process kill in the page cache.)
    do {
      REQUIRE(seq != UINT64_MAX);
      REQUIRE(static_cast<int64_t>(seq) > acked_max);
      acked_max = static_cast<int64_t>(seq);
    } while (::read(fds[0], &seq, sizeof seq) == sizeof seq);
    ::close(fds[0]);

    // Reopen as the next broker start would (no clean-shutdown marker) and check.
    REQUIRE_FALSE(fs::exists(tmp.path / kCleanShutdownFile));
    auto rp = read_offset_checkpoint(tmp.path / kRecoveryPointCheckpointFile);
    REQUIRE(rp);
    LogOptions o;
    o.recovery_point = rp->count(kPartition) ? (*rp)[kPartition] : 0;
    auto log = Log::open(tmp.path / kPartition.dir_name(), manager_options(tmp.path).default_config, o);
    REQUIRE(log);
    auto all = read_all(**log);
    CAPTURE(rounds, acked_max, all.size());
    REQUIRE(static_cast<int64_t>(all.size()) >= acked_max + 1);
    int64_t next_offset = 0;
    uint64_t next_seq = 0;
    for (const auto& b : all) {
      REQUIRE(b.crc_ok);
      REQUIRE(b.tag == next_seq);
      REQUIRE(b.header.base_offset == next_offset);
      REQUIRE(b.header.last_offset_delta == static_cast<int32_t>(b.tag % 3));
      next_seq = b.tag + 1;
      next_offset = b.header.last_offset() + 1;
    }
    REQUIRE((*log)->log_end_offset() == next_offset);
    segments = (*log)->segment_count();
    (*log)->abandon_for_testing();  // leave it as found: the next child recovers it again
  }
  REQUIRE(rounds >= 5);
  REQUIRE(acked_max > 0);
  REQUIRE(segments > 1);  // rolls happened between kills
}
