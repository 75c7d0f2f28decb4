// The states of a transactional id, as Kafka's TransactionState
// (transaction-coordinator TransactionState.java): the int8 id written in
// __transaction_state values, the name DescribeTransactions and
// ListTransactions print, and which state each may be entered from.
//
//   Empty --AddPartitions--> Ongoing --EndTxn--> PrepareCommit / PrepareAbort
//   PrepareCommit --markers written--> CompleteCommit (PrepareAbort likewise)
//   Ongoing --InitProducerId of a new producer, or timeout--> PrepareEpochFence
//       --> PrepareAbort
//   Empty / CompleteCommit / CompleteAbort --expiry--> Dead (a tombstone)
//   Under TV_2 an EndTxn(abort) may also start from Empty, CompleteCommit or
//   CompleteAbort.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace runnel::broker::transaction {

enum class TransactionState : int8_t {
  empty = 0,
  ongoing = 1,
  prepare_commit = 2,
  prepare_abort = 3,
  complete_commit = 4,
  complete_abort = 5,
  dead = 6,
  prepare_epoch_fence = 7,
};

inline constexpr std::array<TransactionState, 8> kAllTransactionStates = {
    TransactionState::empty,          TransactionState::ongoing,        TransactionState::prepare_commit,
    TransactionState::prepare_abort,  TransactionState::complete_commit, TransactionState::complete_abort,
    TransactionState::dead,           TransactionState::prepare_epoch_fence,
};

inline int8_t state_id(TransactionState s) { return static_cast<int8_t>(s); }

// TransactionState.fromId; nullopt where Kafka throws for an unknown id.
std::optional<TransactionState> transaction_state_from_id(int8_t id);

// Kafka's names: "Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
// "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence".
std::string_view state_name(TransactionState s);
std::optional<TransactionState> transaction_state_from_name(std::string_view name);

// TransactionState.validPreviousStates: may a transaction in `from` move to `to`?
bool is_valid_previous_state(TransactionState to, TransactionState from);

// TransactionState.isExpirationAllowed: an id in this state may expire
// (transactional.id.expiration.ms) when no transaction is in flight.
bool is_expiration_allowed(TransactionState s);

}  // namespace runnel::broker::transaction
