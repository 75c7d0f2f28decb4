// TransactionCoordinator driven in memory: a log that keeps what it is
// given (and can fail), a marker channel that records the markers (and can
// refuse them), a counting producer id source and a manual clock.
#include "broker/transaction/transaction_coordinator.h"

#include <catch2/catch.hpp>
#include <deque>
#include <future>

#include "broker/transaction/transaction_log.h"

using namespace runnel::broker::transaction;
using runnel::ManualClock;
using runnel::protocol::Bytes;
using runnel::protocol::ByteView;
using S = TransactionState;

namespace {

namespace asio = boost::asio;

struct LogRecord {
  int32_t partition;
  Bytes key;
  std::optional<Bytes> value;
  bool sync = true;
};

class MemoryLog : public TxnStateLog {
 public:
  std::vector<LogRecord> records;
  std::deque<ErrorCode> fail_next;  // answers for the next appends, then none
  asio::awaitable<ErrorCode> append(int32_t partition, Bytes key, std::optional<Bytes> value, bool sync) override {
    if (!fail_next.empty()) {
      ErrorCode e = fail_next.front();
      fail_next.pop_front();
      co_return e;
    }
    records.push_back({partition, std::move(key), std::move(value), sync});
    co_return ErrorCode::none;
  }
  // The state of the last record written.
  S last_state() const {
    auto v = decode_value(ByteView(records.back().value->data(), records.back().value->size()));
    return static_cast<S>(v.value->transaction_status);
  }
};

struct SentMarker {
  TxnMarker marker;
  std::string topic;
  int32_t partition;
};

class MemoryMarkers : public TxnMarkerChannel {
 public:
  std::vector<SentMarker> written;
  std::deque<ErrorCode> answers;  // for the next targets, then none
  std::set<std::string> deleted;
  // While set, a send waits until it is cancelled: the markers in flight.
  std::optional<asio::steady_timer> gate;
  asio::awaitable<void> send(std::span<MarkerTarget> targets) override {
    if (gate) co_await gate->async_wait(asio::as_tuple(asio::use_awaitable));
    for (auto& t : targets) {
      t.error = answers.empty() ? ErrorCode::none : answers.front();
      if (!answers.empty()) answers.pop_front();
      if (t.error == ErrorCode::none) written.push_back({*t.marker, t.topic, t.partition});
    }
    co_return;
  }
  bool topic_exists(const std::string& topic) const override { return !deleted.contains(topic); }
};

class CountingIds : public ProducerIdSource {
 public:
  int64_t next_id = 1000;
  asio::awaitable<std::optional<int64_t>> next() override { co_return next_id++; }
};

struct Fixture {
  asio::io_context io;
  ManualClock clock;
  MemoryLog log;
  MemoryMarkers markers;
  CountingIds ids;
  TransactionCoordinator coordinator{io.get_executor(), config(), log, markers, ids, clock};

  static CoordinatorConfig config() {
    CoordinatorConfig c;
    c.state_partitions = 1;
    c.marker_retry_backoff_ms = 1;
    // As TransactionService: values at version 1, any client's protocol.
    c.level = kFinalizedTransactionVersion;
    return c;
  }
  Fixture() {
    coordinator.begin_loading(0, 7);
    coordinator.end_loading(0);
  }
  // Runs until the awaitable completes; what it spawned may still be
  // pending (drain runs that).
  template <typename T>
  T run(asio::awaitable<T> a) {
    auto f = asio::co_spawn(io, std::move(a), asio::use_future);
    io.restart();
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
    return f.get();
  }
  void drain() {
    io.restart();
    io.run();
  }
  InitProducerIdResult init(const std::string& id, std::optional<ProducerIdAndEpoch> expected = std::nullopt) {
    return run(coordinator.init_producer_id(id, 60000, expected));
  }
  ErrorCode add(const std::string& id, int64_t pid, int16_t epoch, std::set<TopicPartition> parts) {
    return run(coordinator.add_partitions(id, pid, epoch, std::move(parts)));
  }
  ErrorCode end(const std::string& id, int64_t pid, int16_t epoch, bool commit) {
    return run(coordinator.end_transaction(id, pid, epoch, commit)).error;
  }
  // Transaction protocol v2: the partition leader's add, EndTxn v5.
  ErrorCode add_v2(const std::string& id, int64_t pid, int16_t epoch, std::set<TopicPartition> parts) {
    return run(coordinator.add_partitions(id, pid, epoch, std::move(parts), TransactionVersion::tv2));
  }
  TransactionCoordinator::EndTxnResult end_v2(const std::string& id, int64_t pid, int16_t epoch, bool commit) {
    return run(coordinator.end_transaction(id, pid, epoch, commit, TransactionVersion::tv2));
  }
  const TransactionMetadata& md(const std::string& id) { return *coordinator.find(id).metadata; }
};

}  // namespace

TEST_CASE("InitProducerId hands a new id epoch 0 and bumps it on each call", "[transaction][txncoordinator]") {
  Fixture f;
  auto a = f.init("t");
  CHECK(a.error == ErrorCode::none);
  CHECK((a.producer_id == 1000 && a.producer_epoch == 0));
  auto b = f.init("t");
  CHECK((b.error == ErrorCode::none && b.producer_id == 1000 && b.producer_epoch == 1));
  REQUIRE(f.log.records.size() == 2);
  CHECK(f.log.last_state() == S::empty);
  // KIP-360: naming an epoch that is neither the current one nor, as a
  // retry, the last one is fenced.
  CHECK(f.init("t", ProducerIdAndEpoch{1000, 5}).error == ErrorCode::producer_fenced);
  CHECK(f.init("t", ProducerIdAndEpoch{1000, 1}).producer_epoch == 2);
  CHECK(f.run(f.coordinator.init_producer_id("t", 900001, std::nullopt)).error == ErrorCode::invalid_transaction_timeout);
  CHECK(f.run(f.coordinator.init_producer_id("", 1000, std::nullopt)).error == ErrorCode::invalid_request);
}

TEST_CASE("a partition not coordinated or still loading answers as Kafka", "[transaction][txncoordinator]") {
  Fixture f;
  f.coordinator.unload_partition(0);
  CHECK(f.init("t").error == ErrorCode::not_coordinator);
  f.coordinator.begin_loading(0, 8);
  CHECK(f.init("t").error == ErrorCode::coordinator_load_in_progress);
  f.coordinator.end_loading(0);
  CHECK(f.init("t").error == ErrorCode::none);
}

TEST_CASE("commit writes Ongoing PrepareCommit CompleteCommit and a marker per partition", "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.init("t");
  CHECK(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}, {"b", 1}}) == ErrorCode::none);
  CHECK(f.md("t").state == S::ongoing);
  // Already in the transaction: answered at once, nothing written.
  const size_t written = f.log.records.size();
  CHECK(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::none);
  CHECK(f.log.records.size() == written);
  CHECK(f.add("t", p.producer_id, p.producer_epoch - 1, {{"a", 0}}) == ErrorCode::producer_fenced);
  CHECK(f.add("t", p.producer_id + 1, p.producer_epoch, {{"a", 0}}) == ErrorCode::invalid_producer_id_mapping);
  CHECK(f.end("t", p.producer_id, p.producer_epoch, true) == ErrorCode::none);
  f.drain();
  REQUIRE(f.markers.written.size() == 2);
  for (const auto& m : f.markers.written) {
    CHECK(m.marker.commit);
    CHECK(m.marker.coordinator_epoch == 7);
    CHECK((m.marker.producer_id == p.producer_id && m.marker.producer_epoch == p.producer_epoch));
  }
  CHECK(f.md("t").state == S::complete_commit);
  CHECK(f.md("t").topic_partitions.empty());
  CHECK(f.log.last_state() == S::complete_commit);
  // Only the completion goes without an fsync of its own: losing it only sends the markers again.
  for (size_t i = 0; i + 1 < f.log.records.size(); ++i) CHECK(f.log.records[i].sync);
  CHECK_FALSE(f.log.records.back().sync);
  // A retried commit is answered NONE, an abort of it INVALID_TXN_STATE.
  CHECK(f.end("t", p.producer_id, p.producer_epoch, true) == ErrorCode::none);
  CHECK(f.end("t", p.producer_id, p.producer_epoch, false) == ErrorCode::invalid_txn_state);
  CHECK(f.end("t", p.producer_id, p.producer_epoch - 1, true) == ErrorCode::producer_fenced);
}

TEST_CASE("InitProducerId on an ongoing transaction fences and aborts it first", "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.init("t");
  REQUIRE(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::none);
  CHECK(f.init("t").error == ErrorCode::concurrent_transactions);
  f.drain();
  REQUIRE(f.markers.written.size() == 1);
  CHECK_FALSE(f.markers.written[0].marker.commit);
  CHECK(f.markers.written[0].marker.producer_epoch == p.producer_epoch + 1);
  CHECK(f.md("t").state == S::complete_abort);
  auto again = f.init("t");
  CHECK((again.error == ErrorCode::none && again.producer_epoch == p.producer_epoch + 2));
  // The fenced producer's requests are refused.
  CHECK(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::producer_fenced);
}

TEST_CASE("a failed log write changes nothing and maps the error", "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.init("t");
  f.log.fail_next = {ErrorCode::not_enough_replicas};
  CHECK(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::coordinator_not_available);
  CHECK(f.md("t").state == S::empty);
  CHECK_FALSE(f.md("t").pending_transition_in_progress());
  f.log.fail_next = {ErrorCode::not_leader_or_follower};
  CHECK(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::not_coordinator);
  CHECK(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::none);
}

TEST_CASE("markers are retried until written and a deleted topic is skipped", "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.init("t");
  REQUIRE(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}, {"gone", 0}}) == ErrorCode::none);
  f.markers.deleted.insert("gone");
  f.markers.answers = {ErrorCode::not_leader_or_follower, ErrorCode::kafka_storage_error};
  f.markers.gate.emplace(f.io, asio::steady_timer::time_point::max());
  // While the markers are in flight the transaction is PrepareCommit: a new
  // AddPartitionsToTxn or Produce waits (CONCURRENT_TRANSACTIONS).
  CHECK(f.end("t", p.producer_id, p.producer_epoch, true) == ErrorCode::none);
  CHECK(f.md("t").state == S::prepare_commit);
  CHECK(f.coordinator.verify_partitions("t", p.producer_id, p.producer_epoch, {{"a", 0}}).error ==
        ErrorCode::concurrent_transactions);
  CHECK(f.add("t", p.producer_id, p.producer_epoch, {{"c", 0}}) == ErrorCode::concurrent_transactions);
  f.markers.gate->cancel();
  f.markers.gate.reset();
  f.drain();
  REQUIRE(f.markers.written.size() == 1);
  CHECK(f.markers.written[0].topic == "a");
  CHECK(f.md("t").state == S::complete_commit);
}

TEST_CASE("a fenced marker stops the sending and leaves the transaction to the newer coordinator", "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.init("t");
  REQUIRE(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::none);
  f.markers.answers = {ErrorCode::transaction_coordinator_fenced};
  CHECK(f.end("t", p.producer_id, p.producer_epoch, false) == ErrorCode::none);
  f.drain();
  CHECK(f.markers.written.empty());
  CHECK(f.md("t").state == S::prepare_abort);
}

TEST_CASE("verify_partitions answers per partition as Kafka's verification", "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.init("t");
  REQUIRE(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::none);
  auto v = f.coordinator.verify_partitions("t", p.producer_id, p.producer_epoch, {{"a", 0}, {"a", 1}});
  CHECK(v.error == ErrorCode::none);
  CHECK(v.partitions.at({"a", 0}) == ErrorCode::none);
  CHECK(v.partitions.at({"a", 1}) == ErrorCode::transaction_abortable);
  CHECK(f.coordinator.verify_partitions("t", p.producer_id, p.producer_epoch + 1, {{"a", 0}}).error ==
        ErrorCode::producer_fenced);
  CHECK(f.coordinator.verify_partitions("u", p.producer_id, p.producer_epoch, {{"a", 0}}).error ==
        ErrorCode::invalid_producer_id_mapping);
}

TEST_CASE("a transaction open past its timeout is fenced and aborted", "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.run(f.coordinator.init_producer_id("t", 1000, std::nullopt));
  REQUIRE(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::none);
  f.coordinator.abort_timed_out_transactions();
  f.drain();
  CHECK(f.md("t").state == S::ongoing);
  f.clock.advance(1001);
  f.coordinator.abort_timed_out_transactions();
  f.drain();
  CHECK(f.md("t").state == S::complete_abort);
  REQUIRE(f.markers.written.size() == 1);
  CHECK(f.markers.written[0].marker.producer_epoch == p.producer_epoch + 1);
  CHECK(f.end("t", p.producer_id, p.producer_epoch, true) == ErrorCode::producer_fenced);
}

TEST_CASE("an idle transactional id expires with a tombstone", "[transaction][txncoordinator]") {
  Fixture f;
  f.init("t");
  f.clock.advance(Fixture::config().id_expiration_ms + 1);
  f.coordinator.remove_expired_transactional_ids();
  f.drain();
  CHECK(f.coordinator.find("t").metadata == nullptr);
  CHECK_FALSE(f.log.records.back().value.has_value());
  // A new producer for the id starts over at epoch 0 with a new producer id.
  auto again = f.init("t");
  CHECK((again.producer_id == 1001 && again.producer_epoch == 0));
}

TEST_CASE("a loaded log restores the ids and finishes a transaction found prepared", "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.init("t");
  REQUIRE(f.add("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::none);
  f.markers.answers = {ErrorCode::transaction_coordinator_fenced};  // the markers never go out here
  REQUIRE(f.end("t", p.producer_id, p.producer_epoch, true) == ErrorCode::none);
  f.drain();
  REQUIRE(f.log.last_state() == S::prepare_commit);

  Fixture g;
  g.coordinator.unload_partition(0);
  g.coordinator.begin_loading(0, 8);
  for (const auto& r : f.log.records) {
    std::optional<ByteView> value;
    if (r.value) value = ByteView(r.value->data(), r.value->size());
    REQUIRE(g.coordinator.replay(0, ByteView(r.key.data(), r.key.size()), value));
  }
  CHECK_FALSE(g.coordinator.replay(0, ByteView(), std::nullopt));
  g.coordinator.end_loading(0);
  g.drain();
  REQUIRE(g.markers.written.size() == 1);
  CHECK(g.markers.written[0].marker.commit);
  CHECK(g.markers.written[0].marker.coordinator_epoch == 8);
  CHECK(g.md("t").state == S::complete_commit);
  CHECK(g.md("t").producer_id == p.producer_id);
  CHECK(g.md("t").producer_epoch == p.producer_epoch);
}

// KIP-890 part 2: every EndTxn v5 bumps the epoch, the markers carry the
// bumped epoch and transaction version 2, and the answer names it; a retry
// names the epoch before the bump.
TEST_CASE("transaction protocol v2 bumps the epoch at every end and recognises retries",
          "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.init("t");
  REQUIRE(f.add_v2("t", p.producer_id, p.producer_epoch, {{"a", 0}, {"b", 1}}) == ErrorCode::none);
  CHECK(f.md("t").client_transaction_version == TransactionVersion::tv2);
  auto ended = f.end_v2("t", p.producer_id, p.producer_epoch, true);
  CHECK(ended.error == ErrorCode::none);
  CHECK((ended.producer_id == p.producer_id && ended.producer_epoch == p.producer_epoch + 1));
  f.drain();
  REQUIRE(f.markers.written.size() == 2);
  for (const auto& m : f.markers.written) {
    CHECK(m.marker.commit);
    CHECK(m.marker.producer_epoch == p.producer_epoch + 1);
    CHECK(m.marker.transaction_version == 2);
  }
  CHECK(f.md("t").state == S::complete_commit);
  CHECK(f.md("t").producer_epoch == p.producer_epoch + 1);
  CHECK(f.md("t").last_producer_epoch == p.producer_epoch);

  // The commit retried under the old epoch: NONE with the new epoch; as an
  // abort it is invalid; any older epoch is fenced.
  auto retried = f.end_v2("t", p.producer_id, p.producer_epoch, true);
  CHECK((retried.error == ErrorCode::none && retried.producer_epoch == p.producer_epoch + 1));
  CHECK(f.end_v2("t", p.producer_id, p.producer_epoch, false).error == ErrorCode::invalid_txn_state);
  CHECK(f.end_v2("t", p.producer_id, p.producer_epoch - 1, true).error == ErrorCode::producer_fenced);
  // The old epoch can no longer add partitions.
  CHECK(f.add_v2("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::producer_fenced);

  // A commit at the new epoch with nothing open is invalid, an abort is
  // written (and bumps again) although it has no partition to mark.
  const int16_t e1 = static_cast<int16_t>(p.producer_epoch + 1);
  CHECK(f.end_v2("t", p.producer_id, e1, true).error == ErrorCode::invalid_txn_state);
  const size_t markers_before = f.markers.written.size();
  auto aborted = f.end_v2("t", p.producer_id, e1, false);
  CHECK((aborted.error == ErrorCode::none && aborted.producer_epoch == e1 + 1));
  f.drain();
  CHECK(f.md("t").state == S::complete_abort);
  CHECK(f.markers.written.size() == markers_before);

  // The next transaction at the newest epoch: added, aborted, marked at +1.
  const int16_t e2 = static_cast<int16_t>(e1 + 1);
  REQUIRE(f.add_v2("t", p.producer_id, e2, {{"a", 0}}) == ErrorCode::none);
  auto third = f.end_v2("t", p.producer_id, e2, false);
  CHECK((third.error == ErrorCode::none && third.producer_epoch == e2 + 1));
  f.drain();
  REQUIRE(f.markers.written.size() == markers_before + 1);
  CHECK_FALSE(f.markers.written.back().marker.commit);
  CHECK(f.markers.written.back().marker.producer_epoch == e2 + 1);
  // Its retry is answered NONE.
  CHECK(f.end_v2("t", p.producer_id, e2, false).error == ErrorCode::none);
}

TEST_CASE("a transaction timed out is aborted in the cluster's transaction version, one epoch up",
          "[transaction][txncoordinator]") {
  Fixture f;
  auto p = f.init("t");
  REQUIRE(f.add_v2("t", p.producer_id, p.producer_epoch, {{"a", 0}}) == ErrorCode::none);
  f.clock.advance(60001);
  f.coordinator.abort_timed_out_transactions();
  f.drain();
  CHECK(f.md("t").state == S::complete_abort);
  REQUIRE(f.markers.written.size() == 1);
  CHECK_FALSE(f.markers.written[0].marker.commit);
  // Under TV_2 the abort's bump is the fence (Kafka 4.1.1 writes
  // PrepareAbort one above the producer's epoch), marked in version 2.
  CHECK(f.markers.written[0].marker.producer_epoch == p.producer_epoch + 1);
  CHECK(f.markers.written[0].marker.transaction_version == 2);
  CHECK(f.md("t").producer_epoch == p.producer_epoch + 1);
  CHECK(f.md("t").client_transaction_version == TransactionVersion::tv2);
  // The producer's commit afterwards looks like a retry of the abort's
  // bump, and a commit after an abort is INVALID_TXN_STATE, as Kafka's
  // table answers (a fatal error to the client either way); two epochs
  // back it is fenced.
  CHECK(f.end_v2("t", p.producer_id, p.producer_epoch, true).error == ErrorCode::invalid_txn_state);
  CHECK(f.end_v2("t", p.producer_id, p.producer_epoch - 1, true).error == ErrorCode::producer_fenced);
}
