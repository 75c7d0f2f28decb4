#include "broker/transaction/transaction_state.h"

namespace runnel::broker::transaction {

namespace {

using S = TransactionState;

constexpr uint8_t bit(S s) { return static_cast<uint8_t>(1u << static_cast<int>(s)); }

// One mask a state: the states it may be entered from (Kafka 4.1's
// VALID_PREVIOUS_STATES).
constexpr uint8_t valid_previous_mask(S to) {
  switch (to) {
    case S::empty: return bit(S::empty) | bit(S::complete_commit) | bit(S::complete_abort);
    case S::ongoing: return bit(S::ongoing) | bit(S::empty) | bit(S::complete_commit) | bit(S::complete_abort);
    case S::prepare_commit: return bit(S::ongoing);
    // From Empty and the Complete states only under TV_2 (an abort without
    // partitions); TransactionMetadata.completeTransitionTo checks the version.
    case S::prepare_abort:
      return bit(S::ongoing) | bit(S::prepare_epoch_fence) | bit(S::empty) | bit(S::complete_commit) |
             bit(S::complete_abort);
    case S::complete_commit: return bit(S::prepare_commit);
    case S::complete_abort: return bit(S::prepare_abort);
    case S::dead: return bit(S::empty) | bit(S::complete_abort) | bit(S::complete_commit);
    case S::prepare_epoch_fence: return bit(S::ongoing);
  }
  return 0;
}

}  // namespace

std::optional<TransactionState> transaction_state_from_id(int8_t id) {
  if (id < 0 || id > 7) return std::nullopt;
  return static_cast<TransactionState>(id);
}

std::string_view state_name(TransactionState s) {
  switch (s) {
    case S::empty: return "Empty";
    case S::ongoing: return "Ongoing";
    case S::prepare_commit: return "PrepareCommit";
    case S::prepare_abort: return "PrepareAbort";
    case S::complete_commit: return "CompleteCommit";
    case S::complete_abort: return "CompleteAbort";
    case S::dead: return "Dead";
    case S::prepare_epoch_fence: return "PrepareEpochFence";
  }
  return "Unknown";
}

std::optional<TransactionState> transaction_state_from_name(std::string_view name) {
  for (S s : kAllTransactionStates)
    if (state_name(s) == name) return s;
  return std::nullopt;
}

bool is_valid_previous_state(TransactionState to, TransactionState from) {
  return (valid_previous_mask(to) & bit(from)) != 0;
}

bool is_expiration_allowed(TransactionState s) {
  return s == S::empty || s == S::complete_commit || s == S::complete_abort;
}

}  // namespace runnel::broker::transaction
