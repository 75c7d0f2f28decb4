#include "broker/transaction/transaction_metadata.h"

#include <catch2/catch.hpp>

using namespace runnel::broker::transaction;
using runnel::protocol::ErrorCode;

using S = TransactionState;
using TV = TransactionVersion;

namespace {

constexpr int64_t kPid = 1000;
constexpr int32_t kTimeout = 60000;

// An id that has completed InitProducerId: Empty at `epoch`.
TransactionMetadata empty_at(int16_t epoch, TV version = TV::tv0) {
  TransactionMetadata m;
  m.transactional_id = "txn";
  m.producer_id = kPid;
  m.producer_epoch = epoch;
  m.txn_timeout_ms = kTimeout;
  m.state = S::empty;
  m.txn_last_update_timestamp = 100;
  m.client_transaction_version = version;
  return m;
}

const std::set<TopicPartition> kT0 = {{"t", 0}};
const std::set<TopicPartition> kT0T1 = {{"t", 0}, {"t", 1}};

// Prepares with `prepare`, then completes that transit, as the coordinator
// does once the write is replicated.
template <typename Prepare>
TxnTransitMetadata transit(TransactionMetadata& m, Prepare prepare) {
  TransitResult r = prepare(m);
  INFO((r.ok() ? std::string() : r.error().message));
  REQUIRE(r.ok());
  REQUIRE(m.pending_state == r->txn_state);
  auto error = m.complete_transition_to(r.value());
  INFO((error ? error->message : std::string()));
  REQUIRE_FALSE(error);
  CHECK_FALSE(m.pending_state);
  CHECK(m.state == r->txn_state);
  return r.value();
}

TransactionMetadata ongoing_at(int16_t epoch, TV version = TV::tv0) {
  auto m = empty_at(epoch, version);
  transit(m, [&](TransactionMetadata& x) { return x.prepare_add_partitions(kT0, 200, version); });
  return m;
}

}  // namespace

TEST_CASE("TransactionMetadata InitProducerId of a new id starts at epoch 0", "[transaction][txnmeta]") {
  TransactionMetadata m;
  m.transactional_id = "txn";
  m.producer_id = kPid;
  m.txn_timeout_ms = 1000;
  auto t = transit(m, [](TransactionMetadata& x) { return x.prepare_increment_producer_epoch(kTimeout, std::nullopt, 50); });
  CHECK(m.producer_epoch == 0);
  CHECK(m.last_producer_epoch == kNoProducerEpoch);
  CHECK(m.txn_timeout_ms == kTimeout);
  CHECK(m.txn_start_timestamp == -1);
  CHECK(m.txn_last_update_timestamp == 50);
  CHECK(t.prev_producer_id == kPid);
}

TEST_CASE("TransactionMetadata InitProducerId with an expected epoch", "[transaction][txnmeta]") {
  SECTION("the current epoch bumps and remembers it") {
    auto m = empty_at(3);
    transit(m, [](TransactionMetadata& x) { return x.prepare_increment_producer_epoch(kTimeout, int16_t{3}, 9); });
    CHECK(m.producer_epoch == 4);
    CHECK(m.last_producer_epoch == 3);
    SECTION("and a retry with that epoch returns the current one") {
      transit(m, [](TransactionMetadata& x) { return x.prepare_increment_producer_epoch(kTimeout, int16_t{3}, 10); });
      CHECK(m.producer_epoch == 4);
      CHECK(m.last_producer_epoch == 3);
    }
  }
  SECTION("any other epoch is fenced and nothing is pending") {
    auto m = empty_at(3);
    auto r = m.prepare_increment_producer_epoch(kTimeout, int16_t{1}, 9);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().error == ErrorCode::producer_fenced);
    CHECK_FALSE(m.pending_state);
  }
}

TEST_CASE("TransactionMetadata epoch exhaustion needs a new producer id", "[transaction][txnmeta]") {
  CHECK_FALSE(TransactionMetadata::is_epoch_exhausted(32765));
  CHECK(TransactionMetadata::is_epoch_exhausted(32766));
  CHECK(TransactionMetadata::is_epoch_exhausted(32767));
  auto m = empty_at(32766);
  auto r = m.prepare_increment_producer_epoch(kTimeout, std::nullopt, 9);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().error == ErrorCode::unknown_server_error);
  CHECK_FALSE(m.pending_state);
  auto t = transit(m, [](TransactionMetadata& x) { return x.prepare_producer_id_rotation(2000, kTimeout, 9, true); });
  CHECK(m.producer_id == 2000);
  CHECK(m.producer_epoch == 0);
  CHECK(m.last_producer_epoch == 32766);
  CHECK(m.prev_producer_id == kPid);
  CHECK(t.txn_start_timestamp == -1);
}

TEST_CASE("TransactionMetadata rotation without recording the last epoch", "[transaction][txnmeta]") {
  auto m = empty_at(32766);
  transit(m, [](TransactionMetadata& x) { return x.prepare_producer_id_rotation(2000, kTimeout, 9, false); });
  CHECK(m.last_producer_epoch == kNoProducerEpoch);
}

TEST_CASE("TransactionMetadata rotation refused while a transaction is pending", "[transaction][txnmeta]") {
  auto m = ongoing_at(1);
  CHECK_FALSE(m.prepare_producer_id_rotation(2000, kTimeout, 9, true).ok());
  CHECK_FALSE(m.pending_state);
}

TEST_CASE("TransactionMetadata AddPartitions starts and extends a transaction", "[transaction][txnmeta]") {
  auto m = empty_at(1);
  transit(m, [](TransactionMetadata& x) { return x.prepare_add_partitions(kT0, 200, TV::tv0); });
  CHECK(m.state == S::ongoing);
  CHECK(m.txn_start_timestamp == 200);
  CHECK(m.topic_partitions == kT0);
  transit(m, [](TransactionMetadata& x) { return x.prepare_add_partitions({{"t", 1}}, 300, TV::tv0); });
  CHECK(m.txn_start_timestamp == 200);
  CHECK(m.txn_last_update_timestamp == 300);
  CHECK(m.topic_partitions == kT0T1);
}

TEST_CASE("TransactionMetadata TV1 commit and abort keep the epoch", "[transaction][txnmeta]") {
  for (S prepare : {S::prepare_commit, S::prepare_abort}) {
    auto m = ongoing_at(5, TV::tv1);
    auto t = transit(m, [&](TransactionMetadata& x) {
      return x.prepare_abort_or_commit(prepare, TV::tv1, kNoProducerId, 400, false);
    });
    CHECK(m.producer_epoch == 5);
    CHECK(m.topic_partitions == kT0);
    CHECK(m.txn_start_timestamp == 200);
    CHECK(t.txn_last_update_timestamp == 400);
    transit(m, [](TransactionMetadata& x) { return x.prepare_complete(500); });
    CHECK(m.state == (prepare == S::prepare_commit ? S::complete_commit : S::complete_abort));
    CHECK(m.producer_epoch == 5);
    CHECK(m.producer_id == kPid);
    CHECK(m.topic_partitions.empty());
    CHECK(m.txn_start_timestamp == 200);
    CHECK(m.txn_last_update_timestamp == 500);
  }
}

TEST_CASE("TransactionMetadata TV2 every EndTxn bumps the epoch", "[transaction][txnmeta]") {
  auto m = ongoing_at(5, TV::tv2);
  transit(m, [](TransactionMetadata& x) {
    return x.prepare_abort_or_commit(S::prepare_commit, TV::tv2, kNoProducerId, 400, false);
  });
  CHECK(m.producer_epoch == 6);
  CHECK(m.last_producer_epoch == 5);
  transit(m, [](TransactionMetadata& x) { return x.prepare_complete(500); });
  CHECK(m.state == S::complete_commit);
  CHECK(m.producer_id == kPid);
  CHECK(m.producer_epoch == 6);
  CHECK(m.last_producer_epoch == 5);
  // The next transaction and its abort bump again.
  transit(m, [](TransactionMetadata& x) { return x.prepare_add_partitions(kT0, 600, TV::tv2); });
  transit(m, [](TransactionMetadata& x) {
    return x.prepare_abort_or_commit(S::prepare_abort, TV::tv2, kNoProducerId, 700, false);
  });
  CHECK(m.producer_epoch == 7);
  CHECK(m.last_producer_epoch == 6);
}

TEST_CASE("TransactionMetadata TV2 aborts a transaction without partitions", "[transaction][txnmeta]") {
  for (S from : {S::empty, S::complete_commit, S::complete_abort}) {
    auto m = empty_at(5, TV::tv2);
    m.state = from;
    m.txn_start_timestamp = 10;
    transit(m, [](TransactionMetadata& x) {
      return x.prepare_abort_or_commit(S::prepare_abort, TV::tv2, kNoProducerId, 400, true);
    });
    CHECK(m.txn_start_timestamp == 400);
    CHECK(m.producer_epoch == 6);
    transit(m, [](TransactionMetadata& x) { return x.prepare_complete(500); });
    CHECK(m.state == S::complete_abort);
  }
}

TEST_CASE("TransactionMetadata TV1 cannot complete an abort without partitions", "[transaction][txnmeta]") {
  auto m = empty_at(5, TV::tv1);
  auto r = m.prepare_abort_or_commit(S::prepare_abort, TV::tv1, kNoProducerId, 400, true);
  REQUIRE(r.ok());  // Empty is a valid previous state of PrepareAbort...
  auto error = m.complete_transition_to(r.value());
  REQUIRE(error);  // ...but only TV2 may move the start timestamp
  CHECK(m.pending_state == S::prepare_abort);
  CHECK(m.state == S::empty);
}

TEST_CASE("TransactionMetadata TV2 EndTxn at an exhausted epoch moves to the next producer id", "[transaction][txnmeta]") {
  auto m = ongoing_at(32766, TV::tv2);
  REQUIRE(m.is_producer_epoch_exhausted());
  auto prepared = transit(m, [](TransactionMetadata& x) {
    return x.prepare_abort_or_commit(S::prepare_commit, TV::tv2, 2000, 400, false);
  });
  CHECK(prepared.producer_epoch == 32767);
  CHECK(m.next_producer_id == 2000);
  auto completed = transit(m, [](TransactionMetadata& x) { return x.prepare_complete(500); });
  CHECK(m.producer_id == 2000);
  CHECK(m.producer_epoch == 0);
  CHECK(m.last_producer_epoch == 32766);  // what the client last saw
  CHECK(m.prev_producer_id == kPid);
  CHECK(m.next_producer_id == kNoProducerId);
  CHECK(completed.prev_producer_id == kPid);
}

TEST_CASE("TransactionMetadata TV2 EndTxn at Short.MaxValue is refused", "[transaction][txnmeta]") {
  auto m = ongoing_at(32766, TV::tv2);
  m.producer_epoch = 32767;
  auto r = m.prepare_abort_or_commit(S::prepare_abort, TV::tv2, 2000, 400, false);
  CHECK_FALSE(r.ok());
  CHECK_FALSE(m.pending_state);
}

TEST_CASE("TransactionMetadata TV1 complete keeps the producer id even with a next one", "[transaction][txnmeta]") {
  auto m = ongoing_at(3, TV::tv1);
  transit(m, [](TransactionMetadata& x) {
    return x.prepare_abort_or_commit(S::prepare_abort, TV::tv1, 2000, 400, false);
  });
  transit(m, [](TransactionMetadata& x) { return x.prepare_complete(500); });
  CHECK(m.producer_id == kPid);
  CHECK(m.producer_epoch == 3);
}

TEST_CASE("TransactionMetadata fencing bumps the epoch once and then aborts", "[transaction][txnmeta]") {
  auto m = ongoing_at(5);
  m.last_producer_epoch = 4;
  auto fence = m.prepare_fence_producer_epoch();
  REQUIRE(fence.ok());
  CHECK(fence->txn_state == S::prepare_epoch_fence);
  CHECK(fence->producer_epoch == 6);
  CHECK(fence->last_producer_epoch == kNoProducerEpoch);
  CHECK(fence->topic_partitions == kT0);
  // PrepareEpochFence is never completed: the abort replaces it.
  CHECK(m.complete_transition_to(fence.value()));
  m.pending_state.reset();
  m.producer_epoch = fence->producer_epoch;
  m.last_producer_epoch = kNoProducerEpoch;
  transit(m, [](TransactionMetadata& x) {
    return x.prepare_abort_or_commit(S::prepare_abort, TV::tv0, kNoProducerId, 400, false);
  });
  transit(m, [](TransactionMetadata& x) { return x.prepare_complete(500); });
  CHECK(m.state == S::complete_abort);
  CHECK(m.producer_epoch == 6);
}

TEST_CASE("TransactionMetadata fencing after a failed fence reuses its epoch", "[transaction][txnmeta]") {
  auto m = ongoing_at(5);
  m.has_failed_epoch_fence = true;
  auto fence = m.prepare_fence_producer_epoch();
  REQUIRE(fence.ok());
  CHECK(fence->producer_epoch == 5);
  m.pending_state.reset();
  m.state = S::prepare_abort;
  (void)m.prepare_complete(500);
  CHECK_FALSE(m.has_failed_epoch_fence);
}

TEST_CASE("TransactionMetadata fencing at Short.MaxValue is refused", "[transaction][txnmeta]") {
  auto m = ongoing_at(5);
  m.producer_epoch = 32767;
  CHECK_FALSE(m.prepare_fence_producer_epoch().ok());
  CHECK_FALSE(m.pending_state);
}

TEST_CASE("TransactionMetadata expiry prepares Dead and never completes it", "[transaction][txnmeta]") {
  for (S from : {S::empty, S::complete_commit, S::complete_abort}) {
    auto m = empty_at(1);
    m.state = from;
    auto r = m.prepare_dead();
    REQUIRE(r.ok());
    CHECK(r->txn_state == S::dead);
    CHECK(r->topic_partitions.empty());
    CHECK(m.complete_transition_to(r.value()));
  }
  // A new id's epoch is -1 and may expire as it is.
  auto fresh = empty_at(kNoProducerEpoch);
  CHECK(fresh.prepare_dead().ok());
}

TEST_CASE("TransactionMetadata illegal transitions are errors not changes", "[transaction][txnmeta]") {
  SECTION("Ongoing to Empty") {
    auto m = ongoing_at(1);
    CHECK_FALSE(m.prepare_increment_producer_epoch(kTimeout, std::nullopt, 9).ok());
    CHECK(m.state == S::ongoing);
    CHECK_FALSE(m.pending_state);
  }
  SECTION("Empty to PrepareCommit") {
    auto m = empty_at(1);
    CHECK_FALSE(m.prepare_abort_or_commit(S::prepare_commit, TV::tv0, kNoProducerId, 9, false).ok());
  }
  SECTION("Empty to CompleteAbort") {
    auto m = empty_at(1);
    CHECK_FALSE(m.prepare_complete(9).ok());
  }
  SECTION("PrepareCommit to Ongoing") {
    auto m = ongoing_at(1);
    transit(m, [](TransactionMetadata& x) {
      return x.prepare_abort_or_commit(S::prepare_commit, TV::tv0, kNoProducerId, 9, false);
    });
    CHECK_FALSE(m.prepare_add_partitions(kT0T1, 10, TV::tv0).ok());
    CHECK_FALSE(m.prepare_fence_producer_epoch().ok());
    CHECK_FALSE(m.prepare_dead().ok());
  }
  SECTION("Ongoing to Dead") {
    auto m = ongoing_at(1);
    CHECK_FALSE(m.prepare_dead().ok());
  }
  SECTION("a second prepare while one is pending") {
    auto m = empty_at(1);
    REQUIRE(m.prepare_add_partitions(kT0, 9, TV::tv0).ok());
    CHECK_FALSE(m.prepare_add_partitions(kT0, 10, TV::tv0).ok());
    CHECK(m.pending_state == S::ongoing);
  }
  SECTION("a negative producer id or epoch") {
    auto m = empty_at(1);
    CHECK_FALSE(m.prepare_producer_id_rotation(-5, kTimeout, 9, false).ok());
    auto fresh = empty_at(kNoProducerEpoch);
    CHECK_FALSE(fresh.prepare_add_partitions(kT0, 9, TV::tv0).ok());
  }
}

TEST_CASE("TransactionMetadata completing checks the transit against the pending state", "[transaction][txnmeta]") {
  SECTION("nothing pending") {
    auto m = empty_at(1);
    CHECK(m.complete_transition_to(m.prepare_no_transit()));
  }
  SECTION("another state than the pending one") {
    auto m = empty_at(1);
    auto r = m.prepare_add_partitions(kT0, 9, TV::tv0);
    REQUIRE(r.ok());
    auto other = r.value();
    other.txn_state = S::empty;
    CHECK(m.complete_transition_to(other));
  }
  SECTION("a changed timeout or lost partitions") {
    auto m = ongoing_at(1);
    auto r = m.prepare_add_partitions({{"t", 1}}, 9, TV::tv0);
    REQUIRE(r.ok());
    auto timeout = r.value();
    timeout.txn_timeout_ms = 1;
    CHECK(m.complete_transition_to(timeout));
    auto fewer = r.value();
    fewer.topic_partitions = {{"t", 1}};
    CHECK(m.complete_transition_to(fewer));
    CHECK(m.pending_state == S::ongoing);
    CHECK(m.topic_partitions == kT0);
    CHECK_FALSE(m.complete_transition_to(r.value()));
  }
  SECTION("an epoch jump on InitProducerId") {
    auto m = empty_at(1);
    auto r = m.prepare_increment_producer_epoch(kTimeout, std::nullopt, 9);
    REQUIRE(r.ok());
    auto jump = r.value();
    jump.producer_epoch = 3;
    CHECK(m.complete_transition_to(jump));
  }
  SECTION("a changed producer id on commit") {
    auto m = ongoing_at(1);
    auto r = m.prepare_abort_or_commit(S::prepare_commit, TV::tv0, kNoProducerId, 9, false);
    REQUIRE(r.ok());
    auto other = r.value();
    other.producer_id = 7;
    CHECK(m.complete_transition_to(other));
  }
}

TEST_CASE("TransactionMetadata removes partitions only while preparing", "[transaction][txnmeta]") {
  auto m = ongoing_at(1);
  CHECK(m.remove_partition({"t", 0}));
  transit(m, [](TransactionMetadata& x) {
    return x.prepare_abort_or_commit(S::prepare_commit, TV::tv0, kNoProducerId, 9, false);
  });
  CHECK_FALSE(m.remove_partition({"t", 0}));
  CHECK(m.topic_partitions.empty());
}

TEST_CASE("TransactionMetadata no transit is the current state", "[transaction][txnmeta]") {
  auto m = ongoing_at(4, TV::tv2);
  m.prev_producer_id = 3;
  auto t = m.prepare_no_transit();
  CHECK(t.producer_id == kPid);
  CHECK(t.prev_producer_id == 3);
  CHECK(t.producer_epoch == 4);
  CHECK(t.txn_state == S::ongoing);
  CHECK(t.topic_partitions == kT0);
  CHECK(t.client_transaction_version == TV::tv2);
  CHECK_FALSE(m.pending_state);
}
