#include "broker/transaction/transaction_state.h"

#include <catch2/catch.hpp>

#include <set>
#include <utility>

using namespace runnel::broker::transaction;

using S = TransactionState;

TEST_CASE("TransactionState ids and names are Kafka's", "[transaction][txnstate]") {
  const std::pair<int8_t, const char*> expected[] = {
      {0, "Empty"},         {1, "Ongoing"},       {2, "PrepareCommit"}, {3, "PrepareAbort"},
      {4, "CompleteCommit"}, {5, "CompleteAbort"}, {6, "Dead"},          {7, "PrepareEpochFence"},
  };
  for (auto [id, name] : expected) {
    auto s = transaction_state_from_id(id);
    REQUIRE(s);
    CHECK(state_id(*s) == id);
    CHECK(state_name(*s) == name);
    CHECK(transaction_state_from_name(name) == s);
  }
  CHECK_FALSE(transaction_state_from_id(8));
  CHECK_FALSE(transaction_state_from_id(-1));
  CHECK_FALSE(transaction_state_from_name("EMPTY"));
  CHECK_FALSE(transaction_state_from_name("Unknown"));
}

TEST_CASE("TransactionState valid previous states are Kafka 4.1's table", "[transaction][txnstate]") {
  const std::set<std::pair<S, S>> legal = {
      {S::empty, S::empty},
      {S::empty, S::complete_commit},
      {S::empty, S::complete_abort},
      {S::ongoing, S::ongoing},
      {S::ongoing, S::empty},
      {S::ongoing, S::complete_commit},
      {S::ongoing, S::complete_abort},
      {S::prepare_commit, S::ongoing},
      {S::prepare_abort, S::ongoing},
      {S::prepare_abort, S::prepare_epoch_fence},
      {S::prepare_abort, S::empty},
      {S::prepare_abort, S::complete_commit},
      {S::prepare_abort, S::complete_abort},
      {S::complete_commit, S::prepare_commit},
      {S::complete_abort, S::prepare_abort},
      {S::dead, S::empty},
      {S::dead, S::complete_abort},
      {S::dead, S::complete_commit},
      {S::prepare_epoch_fence, S::ongoing},
  };
  for (S to : kAllTransactionStates)
    for (S from : kAllTransactionStates) {
      INFO(state_name(from) << " -> " << state_name(to));
      CHECK(is_valid_previous_state(to, from) == (legal.count({to, from}) == 1));
    }
}

TEST_CASE("TransactionState expiration is allowed only when no transaction is in flight", "[transaction][txnstate]") {
  for (S s : kAllTransactionStates) {
    bool expected = s == S::empty || s == S::complete_commit || s == S::complete_abort;
    CHECK(is_expiration_allowed(s) == expected);
  }
}
