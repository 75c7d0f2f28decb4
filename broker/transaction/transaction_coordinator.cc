#include "broker/transaction/transaction_coordinator.h"

#include "broker/coordinator_append_error.h"
#include "broker/logging.h"
#include "broker/transaction/transaction_log.h"

namespace runnel::broker::transaction {

namespace {

using S = TransactionState;

InitProducerIdResult init_error(ErrorCode e) { return {e, kNoProducerId, kNoProducerEpoch}; }

bool is_prepare(TransactionState s) { return s == S::prepare_commit || s == S::prepare_abort; }

// TransactionMarkerRequestCompletionHandler: which partition answers are
// retried. Anything not listed (Kafka throws IllegalStateException for it)
// is logged and retried too: a marker is never given up on silently.
enum class MarkerOutcome { written, retry, fenced };

MarkerOutcome marker_outcome(ErrorCode e) {
  switch (e) {
    case ErrorCode::none:
    case ErrorCode::unsupported_for_message_format:
    case ErrorCode::unsupported_version:
      return MarkerOutcome::written;
    case ErrorCode::invalid_producer_epoch:
    case ErrorCode::transaction_coordinator_fenced:
      return MarkerOutcome::fenced;
    default:
      return MarkerOutcome::retry;
  }
}

}  // namespace

TransactionCoordinator::TransactionCoordinator(asio::any_io_executor ex, CoordinatorConfig config, TxnStateLog& log,
                                               TxnMarkerChannel& markers, ProducerIdSource& ids, const Clock& clock)
    : ex_(std::move(ex)), config_(config), log_(log), markers_(markers), ids_(ids), clock_(clock) {}

int32_t TransactionCoordinator::partition_for(const std::string& transactional_id) const {
  return transaction_partition_for(transactional_id, config_.state_partitions);
}

void TransactionCoordinator::begin_loading(int32_t partition, int32_t coordinator_epoch) {
  StatePartition& sp = partitions_[partition];
  sp.loading = true;
  sp.coordinator_epoch = coordinator_epoch;
  sp.txns.clear();
}

bool TransactionCoordinator::replay(int32_t partition, protocol::ByteView key, std::optional<protocol::ByteView> value) {
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) return true;
  auto k = decode_key(key);
  if (!k) return false;
  const std::string& id = k.value->transactional_id;
  if (!value) {
    it->second.txns.erase(id);
    return true;
  }
  auto v = decode_value(*value);
  if (!v) return false;
  auto md = metadata_from_log_value(id, *v.value);
  if (!md) return false;
  it->second.txns[id] = std::make_shared<TransactionMetadata>(std::move(*md.value));
  return true;
}

void TransactionCoordinator::end_loading(int32_t partition) {
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) return;
  StatePartition& sp = it->second;
  sp.loading = false;
  // TransactionStateManager.loadTransactionsForTxnTopicPartition: a
  // transaction that ended in the log but whose markers may not all be
  // written gets them again.
  for (auto& [id, md] : sp.txns) {
    if (!is_prepare(md->state) || md->pending_transition_in_progress()) continue;
    const bool commit = md->state == S::prepare_commit;
    std::set<TopicPartition> parts = md->topic_partitions;
    auto complete = md->prepare_complete(clock_.wall_ms());
    if (!complete) {
      RLOG_ERROR("transactional id %s: %s", id.c_str(), complete.error().message.c_str());
      continue;
    }
    send_markers(id, sp.coordinator_epoch, md, std::move(parts), commit, complete.value());
  }
}

void TransactionCoordinator::unload_partition(int32_t partition) { partitions_.erase(partition); }

std::optional<int32_t> TransactionCoordinator::coordinator_epoch(int32_t partition) const {
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) return std::nullopt;
  return it->second.coordinator_epoch;
}

bool TransactionCoordinator::is_loading(int32_t partition) const {
  auto it = partitions_.find(partition);
  return it != partitions_.end() && it->second.loading;
}

TransactionCoordinator::Found TransactionCoordinator::get(const std::string& transactional_id) const {
  auto it = partitions_.find(partition_for(transactional_id));
  if (it == partitions_.end()) return {ErrorCode::not_coordinator, 0, nullptr};
  if (it->second.loading) return {ErrorCode::coordinator_load_in_progress, 0, nullptr};
  auto t = it->second.txns.find(transactional_id);
  return {ErrorCode::none, it->second.coordinator_epoch, t == it->second.txns.end() ? nullptr : t->second};
}

std::shared_ptr<TransactionMetadata> TransactionCoordinator::still(
    const std::string& transactional_id, int32_t coordinator_epoch,
    const std::shared_ptr<TransactionMetadata>& md) const {
  Found f = get(transactional_id);
  if (f.error != ErrorCode::none || f.coordinator_epoch != coordinator_epoch || f.metadata != md) return nullptr;
  return f.metadata;
}

TransactionCoordinator::Lookup TransactionCoordinator::find(const std::string& transactional_id) const {
  Found f = get(transactional_id);
  return {f.error, f.metadata.get()};
}

std::vector<const TransactionMetadata*> TransactionCoordinator::all(bool& loading) const {
  std::vector<const TransactionMetadata*> out;
  loading = false;
  for (const auto& [p, sp] : partitions_) {
    if (sp.loading) {
      loading = true;
      continue;
    }
    for (const auto& [id, md] : sp.txns) out.push_back(md.get());
  }
  return out;
}

awaitable<ErrorCode> TransactionCoordinator::append_transit(std::string transactional_id, int32_t coordinator_epoch,
                                                            std::shared_ptr<TransactionMetadata> md,
                                                            TxnTransitMetadata transit, bool keep_pending_on_retry) {
  auto key = key_to_bytes(transactional_id);
  std::optional<protocol::Bytes> value;
  if (transit.txn_state != S::dead) value = value_to_bytes(transit, config_.level);
  if (!key || (transit.txn_state != S::dead && !value)) {
    md->pending_state.reset();
    co_return ErrorCode::unknown_server_error;
  }
  const bool sync = transit.txn_state != S::complete_commit && transit.txn_state != S::complete_abort;
  ErrorCode error = coordinator_append_error(co_await log_.append(partition_for(transactional_id), std::move(*key),
                                                           std::move(value), sync));
  auto current = still(transactional_id, coordinator_epoch, md);
  if (!current) co_return ErrorCode::not_coordinator;
  if (error != ErrorCode::none) {
    if (!(keep_pending_on_retry && error == ErrorCode::coordinator_not_available)) md->pending_state.reset();
    co_return error;
  }
  // An expired id is not completed but removed from the cache (expire).
  if (transit.txn_state == S::dead) co_return ErrorCode::none;
  if (auto err = md->complete_transition_to(transit)) {
    RLOG_ERROR("transactional id %s: %s", transactional_id.c_str(), err->message.c_str());
    md->pending_state.reset();
    co_return err->error;
  }
  co_return ErrorCode::none;
}

awaitable<InitProducerIdResult> TransactionCoordinator::init_producer_id(std::string transactional_id,
                                                                         int32_t txn_timeout_ms,
                                                                         std::optional<ProducerIdAndEpoch> expected) {
  if (transactional_id.empty()) co_return init_error(ErrorCode::invalid_request);
  if (txn_timeout_ms <= 0 || txn_timeout_ms > config_.max_timeout_ms)
    co_return init_error(ErrorCode::invalid_transaction_timeout);
  Found f = get(transactional_id);
  if (f.error != ErrorCode::none) co_return init_error(f.error);
  if (!f.metadata) {
    auto id = co_await ids_.next();
    if (!id) co_return init_error(ErrorCode::coordinator_not_available);
    f = get(transactional_id);
    if (f.error != ErrorCode::none) co_return init_error(f.error);
    if (!f.metadata) {
      // putTransactionStateIfNotExists: a new id in Empty at no epoch.
      auto md = std::make_shared<TransactionMetadata>();
      md->transactional_id = transactional_id;
      md->producer_id = *id;
      md->txn_timeout_ms = txn_timeout_ms;
      md->txn_last_update_timestamp = clock_.wall_ms();
      partitions_[partition_for(transactional_id)].txns[transactional_id] = md;
      f.metadata = md;
    }
  }
  // A rotation to a new producer id needs one first; it is taken before the
  // checks, which run again after the wait.
  std::optional<int64_t> rotation_id;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto md = f.metadata;
    // prepareInitProducerIdTransit
    auto valid = [&](const ProducerIdAndEpoch& e) {
      return md->producer_epoch == kNoProducerEpoch || e.producer_id == md->producer_id ||
             (e.producer_id == md->prev_producer_id && TransactionMetadata::is_epoch_exhausted(e.epoch));
    };
    if (md->pending_transition_in_progress()) co_return init_error(ErrorCode::concurrent_transactions);
    if (expected && !valid(*expected)) co_return init_error(ErrorCode::producer_fenced);
    if (is_prepare(md->state)) co_return init_error(ErrorCode::concurrent_transactions);
    if (md->state == S::ongoing) {
      // Abort the open transaction under a fenced epoch that is never
      // returned; the client retries and gets a second bump (or a new id).
      auto fence = md->prepare_fence_producer_epoch();
      if (!fence) co_return init_error(fence.error().error);
      ErrorCode e = (co_await abort_fenced(transactional_id, md, fence.value())).error;
      co_return init_error(e == ErrorCode::none ? ErrorCode::concurrent_transactions : e);
    }
    if (md->state != S::empty && md->state != S::complete_commit && md->state != S::complete_abort)
      co_return init_error(ErrorCode::unknown_server_error);
    const bool rotate = md->is_producer_epoch_exhausted() && (!expected || expected->epoch == md->producer_epoch);
    if (rotate && !rotation_id) {
      rotation_id = co_await ids_.next();
      if (!rotation_id) co_return init_error(ErrorCode::coordinator_not_available);
      f = get(transactional_id);
      if (f.error != ErrorCode::none) co_return init_error(f.error);
      if (!f.metadata) co_return init_error(ErrorCode::concurrent_transactions);
      continue;
    }
    const int64_t now = clock_.wall_ms();
    std::optional<int16_t> expected_epoch;
    if (expected) expected_epoch = expected->epoch;
    TransitResult transit = rotate ? md->prepare_producer_id_rotation(*rotation_id, txn_timeout_ms, now, expected.has_value())
                                   : md->prepare_increment_producer_epoch(txn_timeout_ms, expected_epoch, now);
    if (!transit) co_return init_error(transit.error().error);
    TxnTransitMetadata t = transit.value();
    ErrorCode e = co_await append_transit(transactional_id, f.coordinator_epoch, md, t);
    if (e != ErrorCode::none) co_return init_error(e);
    RLOG_INFO("initialized transactional id %s with producer id %lld and epoch %d", transactional_id.c_str(),
              static_cast<long long>(t.producer_id), t.producer_epoch);
    co_return InitProducerIdResult{ErrorCode::none, t.producer_id, t.producer_epoch};
  }
  co_return init_error(ErrorCode::concurrent_transactions);
}

awaitable<ErrorCode> TransactionCoordinator::add_partitions(std::string transactional_id, int64_t producer_id,
                                                            int16_t producer_epoch,
                                                            std::set<TopicPartition> partitions,
                                                            TransactionVersion client_version) {
  if (transactional_id.empty()) co_return ErrorCode::invalid_request;
  Found f = get(transactional_id);
  if (f.error != ErrorCode::none) co_return f.error;
  if (!f.metadata) co_return ErrorCode::invalid_producer_id_mapping;
  auto md = f.metadata;
  if (md->pending_transition_in_progress()) co_return ErrorCode::concurrent_transactions;
  if (md->producer_id != producer_id) co_return ErrorCode::invalid_producer_id_mapping;
  if (md->producer_epoch != producer_epoch) co_return ErrorCode::producer_fenced;
  if (is_prepare(md->state)) co_return ErrorCode::concurrent_transactions;
  if (md->state == S::ongoing && std::includes(md->topic_partitions.begin(), md->topic_partitions.end(),
                                               partitions.begin(), partitions.end()))
    co_return ErrorCode::none;
  auto transit = md->prepare_add_partitions(partitions, clock_.wall_ms(), client_version);
  if (!transit) co_return transit.error().error;
  co_return co_await append_transit(transactional_id, f.coordinator_epoch, md, transit.value());
}

TransactionCoordinator::Verification TransactionCoordinator::verify_partitions(
    const std::string& transactional_id, int64_t producer_id, int16_t producer_epoch,
    const std::set<TopicPartition>& partitions) const {
  // handleVerifyPartitionsInTransaction: the pending state is not checked,
  // the partition's own append checks the epoch last.
  if (transactional_id.empty()) return {ErrorCode::invalid_request, {}};
  Found f = get(transactional_id);
  if (f.error != ErrorCode::none) return {f.error, {}};
  if (!f.metadata || f.metadata->producer_id != producer_id) return {ErrorCode::invalid_producer_id_mapping, {}};
  if (f.metadata->producer_epoch != producer_epoch) return {ErrorCode::producer_fenced, {}};
  if (is_prepare(f.metadata->state)) return {ErrorCode::concurrent_transactions, {}};
  Verification v;
  for (const auto& tp : partitions)
    v.partitions[tp] = f.metadata->topic_partitions.contains(tp) ? ErrorCode::none : ErrorCode::transaction_abortable;
  return v;
}

awaitable<TransactionCoordinator::EndTxnResult> TransactionCoordinator::end_transaction(
    std::string transactional_id, int64_t producer_id, int16_t producer_epoch, bool commit,
    TransactionVersion client_version) {
  co_return co_await end_transaction_impl(std::move(transactional_id), producer_id, producer_epoch, commit, true,
                                          client_version);
}

awaitable<TransactionCoordinator::EndTxnResult> TransactionCoordinator::end_transaction_impl(
    std::string transactional_id, int64_t producer_id, int16_t producer_epoch, bool commit, bool from_client,
    TransactionVersion client_version) {
  if (supports_epoch_bump(client_version))
    co_return co_await end_transaction_tv2(std::move(transactional_id), producer_id, producer_epoch, commit,
                                           from_client);
  co_return co_await end_transaction_tv1(std::move(transactional_id), producer_id, producer_epoch, commit,
                                         from_client);
}

// Kafka aborts a fenced transaction in the cluster's transaction version
// ("not from client, use server TV"). Under TV_2 the abort's own bump is
// the fence: it is asked at the epoch before the fence and writes
// PrepareAbort one above it, as Kafka 4.1.1 writes it; before TV_2 the
// abort carries the fence's epoch.
awaitable<TransactionCoordinator::EndTxnResult> TransactionCoordinator::abort_fenced(
    std::string transactional_id, std::shared_ptr<TransactionMetadata> md, TxnTransitMetadata fence) {
  const int16_t epoch = supports_epoch_bump(config_.level) ? md->producer_epoch : fence.producer_epoch;
  co_return co_await end_transaction_impl(std::move(transactional_id), fence.producer_id, epoch, false, false,
                                          config_.level);
}

namespace {

ErrorCode invalid_transition(const std::string& transactional_id, TransactionState state, bool commit) {
  RLOG_DEBUG("transactional id %s: EndTxn(%s) in state %s", transactional_id.c_str(), commit ? "commit" : "abort",
             std::string(state_name(state)).c_str());
  return ErrorCode::invalid_txn_state;
}

}  // namespace

// endTransactionWithTV1: `from_client` false is the coordinator's own abort
// (a fence by InitProducerId or a timeout), under the fenced epoch.
awaitable<TransactionCoordinator::EndTxnResult> TransactionCoordinator::end_transaction_tv1(
    std::string transactional_id, int64_t producer_id, int16_t producer_epoch, bool commit, bool from_client) {
  if (transactional_id.empty()) co_return EndTxnResult{ErrorCode::invalid_request};
  Found f = get(transactional_id);
  if (f.error != ErrorCode::none) co_return EndTxnResult{f.error};
  if (!f.metadata) co_return EndTxnResult{ErrorCode::invalid_producer_id_mapping};
  auto md = f.metadata;
  const auto refused = [&] { return EndTxnResult{invalid_transition(transactional_id, md->state, commit)}; };
  if (md->producer_id != producer_id) co_return EndTxnResult{ErrorCode::invalid_producer_id_mapping};
  if ((from_client && producer_epoch != md->producer_epoch) || producer_epoch < md->producer_epoch)
    co_return EndTxnResult{ErrorCode::producer_fenced};
  if (md->pending_transition_in_progress() && md->pending_state != S::prepare_epoch_fence)
    co_return EndTxnResult{ErrorCode::concurrent_transactions};
  switch (md->state) {
    case S::ongoing:
      break;
    case S::complete_commit:
      co_return commit ? EndTxnResult{} : refused();
    case S::complete_abort:
      co_return commit ? refused() : EndTxnResult{};
    case S::prepare_commit:
      co_return commit ? EndTxnResult{ErrorCode::concurrent_transactions} : refused();
    case S::prepare_abort:
      co_return commit ? refused() : EndTxnResult{ErrorCode::concurrent_transactions};
    case S::empty:
      co_return refused();
    default:
      RLOG_ERROR("transactional id %s found in state %s", transactional_id.c_str(),
                 std::string(state_name(md->state)).c_str());
      co_return EndTxnResult{ErrorCode::unknown_server_error};
  }
  bool epoch_fence = false;
  if (!commit && md->pending_state == S::prepare_epoch_fence) {
    epoch_fence = true;
    take_fence_bump(*md, producer_epoch);
  }
  auto prepared = md->prepare_abort_or_commit(commit ? S::prepare_commit : S::prepare_abort, TransactionVersion::tv0,
                                              kNoProducerId, clock_.wall_ms(), false);
  if (!prepared) co_return EndTxnResult{prepared.error().error};
  EndTxnResult done =
      co_await write_prepared(transactional_id, f.coordinator_epoch, md, prepared.value(), commit, epoch_fence);
  // EndTxn before v5 names no producer.
  co_return EndTxnResult{done.error};
}

// Kafka 4.1's endTransaction for TV_2: the epoch is bumped by every end
// (prepare_abort_or_commit), so a retry names the epoch before the bump
// and is told NONE once the transaction completed; an abort with nothing
// open (Empty, or right after a completion) is written too, bumping the
// epoch, so the client can always abort. An exhausted epoch moves the
// producer to a new id at the completion (next_producer_id).
awaitable<TransactionCoordinator::EndTxnResult> TransactionCoordinator::end_transaction_tv2(
    std::string transactional_id, int64_t producer_id, int16_t producer_epoch, bool commit, bool from_client) {
  if (transactional_id.empty()) co_return EndTxnResult{ErrorCode::invalid_request};
  std::optional<int64_t> next_producer_id;
  for (int attempt = 0; attempt < 2; ++attempt) {
    Found f = get(transactional_id);
    if (f.error != ErrorCode::none) co_return EndTxnResult{f.error};
    if (!f.metadata) co_return EndTxnResult{ErrorCode::invalid_producer_id_mapping};
    auto md = f.metadata;
    const auto refused = [&] { return EndTxnResult{invalid_transition(transactional_id, md->state, commit)}; };
    const EndTxnResult unchanged{ErrorCode::none, md->producer_id, md->producer_epoch};
    const bool epoch_fence = md->pending_state == S::prepare_epoch_fence;
    // A retry of an end whose epoch overflowed into a new producer id, or
    // of an end whose bumped epoch is stored.
    const bool retry_on_overflow = !epoch_fence && md->prev_producer_id == producer_id &&
                                   producer_epoch == INT16_MAX - 1 && md->producer_epoch == 0;
    const bool retry_on_bump = !epoch_fence && md->producer_epoch == producer_epoch + 1;
    bool valid_epoch = false;
    if (epoch_fence) {
      valid_epoch = (!from_client || producer_epoch == md->producer_epoch) && producer_epoch >= md->producer_epoch;
    } else {
      switch (md->state) {
        case S::prepare_commit:
        case S::prepare_abort:
          valid_epoch = retry_on_bump;
          break;
        case S::complete_commit:
        case S::complete_abort:
          valid_epoch = retry_on_bump || retry_on_overflow || producer_epoch == md->producer_epoch;
          break;
        default:
          valid_epoch = producer_epoch == md->producer_epoch;
      }
    }
    const bool retry = retry_on_bump || retry_on_overflow;
    if (md->producer_id != producer_id && !retry_on_overflow)
      co_return EndTxnResult{ErrorCode::invalid_producer_id_mapping};
    if (!valid_epoch) co_return EndTxnResult{ErrorCode::producer_fenced};
    if (md->pending_transition_in_progress() && !epoch_fence)
      co_return EndTxnResult{ErrorCode::concurrent_transactions};
    // What the end writes, or the answer without a write.
    std::optional<TransactionState> next;
    bool no_partition_added = false;
    switch (md->state) {
      case S::ongoing:
        next = commit ? S::prepare_commit : S::prepare_abort;
        break;
      case S::complete_commit:
        if (commit) co_return retry ? unchanged : refused();
        if (retry) co_return refused();
        next = S::prepare_abort;
        no_partition_added = true;
        break;
      case S::complete_abort:
        if (!commit && retry) co_return unchanged;
        if (commit) co_return refused();
        next = S::prepare_abort;
        no_partition_added = true;
        break;
      case S::prepare_commit:
        co_return commit ? EndTxnResult{ErrorCode::concurrent_transactions} : refused();
      case S::prepare_abort:
        co_return commit ? refused() : EndTxnResult{ErrorCode::concurrent_transactions};
      case S::empty:
        if (commit) co_return refused();
        next = S::prepare_abort;
        no_partition_added = true;
        break;
      default:
        RLOG_ERROR("transactional id %s found in state %s", transactional_id.c_str(),
                   std::string(state_name(md->state)).c_str());
        co_return EndTxnResult{ErrorCode::unknown_server_error};
    }
    // The bump exhausts the epoch: the completion moves to a new producer id,
    // taken first (then everything is checked again).
    if (!epoch_fence && md->is_producer_epoch_exhausted() && !next_producer_id) {
      next_producer_id = co_await ids_.next();
      if (!next_producer_id) co_return EndTxnResult{ErrorCode::coordinator_not_available};
      continue;
    }
    if (*next == S::prepare_abort && epoch_fence) take_fence_bump(*md, producer_epoch);
    const int64_t rotate_to = !epoch_fence && md->is_producer_epoch_exhausted() ? *next_producer_id : kNoProducerId;
    auto prepared = md->prepare_abort_or_commit(*next, TransactionVersion::tv2, rotate_to, clock_.wall_ms(),
                                                no_partition_added);
    if (!prepared) co_return EndTxnResult{prepared.error().error};
    co_return co_await write_prepared(transactional_id, f.coordinator_epoch, md, prepared.value(), commit,
                                      epoch_fence);
  }
  co_return EndTxnResult{ErrorCode::concurrent_transactions};
}

void TransactionCoordinator::take_fence_bump(TransactionMetadata& md, int16_t producer_epoch) {
  // The fence's bump is taken here, with the abort that carries it.
  md.pending_state.reset();
  md.producer_epoch = producer_epoch;
  md.last_producer_epoch = kNoProducerEpoch;
}

awaitable<TransactionCoordinator::EndTxnResult> TransactionCoordinator::write_prepared(
    std::string transactional_id, int32_t coordinator_epoch, std::shared_ptr<TransactionMetadata> md,
    TxnTransitMetadata prepared, bool commit, bool epoch_fence) {
  ErrorCode e = co_await append_transit(transactional_id, coordinator_epoch, md, std::move(prepared));
  if (e != ErrorCode::none) {
    // The fence's bump was taken but its abort not written: the next fence must not bump again.
    if (epoch_fence && still(transactional_id, coordinator_epoch, md)) md->has_failed_epoch_fence = true;
    co_return EndTxnResult{e};
  }
  co_return co_await prepared_then_markers(transactional_id, coordinator_epoch, md, commit);
}

awaitable<TransactionCoordinator::EndTxnResult> TransactionCoordinator::prepared_then_markers(
    const std::string& transactional_id, int32_t coordinator_epoch, std::shared_ptr<TransactionMetadata> md,
    bool commit) {
  // Written: the client is answered now, the markers follow.
  if (!still(transactional_id, coordinator_epoch, md)) co_return EndTxnResult{ErrorCode::not_coordinator};
  if (md->pending_transition_in_progress()) co_return EndTxnResult{ErrorCode::concurrent_transactions};
  if (md->state != (commit ? S::prepare_commit : S::prepare_abort))
    co_return EndTxnResult{invalid_transition(transactional_id, md->state, commit)};
  std::set<TopicPartition> parts = md->topic_partitions;
  auto complete = md->prepare_complete(clock_.wall_ms());
  if (!complete) co_return EndTxnResult{complete.error().error};
  const EndTxnResult answer{ErrorCode::none, md->producer_id, md->producer_epoch};
  send_markers(transactional_id, coordinator_epoch, md, std::move(parts), commit, complete.value());
  co_return answer;
}

void TransactionCoordinator::send_markers(std::string transactional_id, int32_t coordinator_epoch,
                                          std::shared_ptr<TransactionMetadata> md,
                                          std::set<TopicPartition> partitions, bool commit,
                                          TxnTransitMetadata complete) {
  asio::co_spawn(ex_,
                 markers_then_complete(std::move(transactional_id), coordinator_epoch, std::move(md),
                                       std::move(partitions), commit, std::move(complete)),
                 asio::detached);
}

awaitable<void> TransactionCoordinator::pause(int64_t ms) {
  asio::steady_timer t(ex_, std::chrono::milliseconds(ms));
  co_await t.async_wait(as_tuple_awaitable);
}

awaitable<void> TransactionCoordinator::markers_then_complete(std::string transactional_id, int32_t coordinator_epoch,
                                                              std::shared_ptr<TransactionMetadata> md,
                                                              std::set<TopicPartition> partitions, bool commit,
                                                              TxnTransitMetadata complete) {
  const TxnMarker marker{complete.producer_id, complete.producer_epoch, commit, coordinator_epoch,
                         static_cast<int8_t>(feature_level(complete.client_transaction_version))};
  std::set<TopicPartition> remaining = std::move(partitions);
  while (!remaining.empty()) {
    std::vector<MarkerTarget> targets;
    for (auto it = remaining.begin(); it != remaining.end();) {
      if (!markers_.topic_exists(it->topic)) {
        it = remaining.erase(it);  // deleted: no marker to write
        continue;
      }
      targets.push_back({&marker, it->topic, it->partition});
      ++it;
    }
    if (targets.empty()) break;
    co_await markers_.send(targets);
    if (!still(transactional_id, coordinator_epoch, md)) co_return;  // another coordinator finishes it
    for (const auto& t : targets) {
      const TopicPartition tp{t.topic, t.partition};
      switch (marker_outcome(t.error)) {
        case MarkerOutcome::written:
          remaining.erase(tp);
          (void)md->remove_partition(tp);
          break;
        case MarkerOutcome::fenced:
          // A newer coordinator owns the transaction: leave it to that one.
          RLOG_WARN("transactional id %s: marker for %s-%d fenced (error %d), stopping", transactional_id.c_str(),
                    t.topic.c_str(), t.partition, protocol::code(t.error));
          co_return;
        case MarkerOutcome::retry:
          RLOG_DEBUG("transactional id %s: marker for %s-%d failed with error %d, retrying", transactional_id.c_str(),
                     t.topic.c_str(), t.partition, protocol::code(t.error));
          break;
      }
    }
    if (!remaining.empty()) co_await pause(config_.marker_retry_backoff_ms);
    if (!still(transactional_id, coordinator_epoch, md)) co_return;
  }
  // Every marker written: the completion, retried while the log is unavailable.
  for (;;) {
    ErrorCode e = co_await append_transit(transactional_id, coordinator_epoch, md, complete, true);
    if (e == ErrorCode::none) co_return;
    if (e != ErrorCode::coordinator_not_available) {
      RLOG_WARN("transactional id %s: completing the transaction failed with error %d", transactional_id.c_str(),
                protocol::code(e));
      co_return;
    }
    co_await pause(config_.marker_retry_backoff_ms);
    if (!still(transactional_id, coordinator_epoch, md)) co_return;
  }
}

void TransactionCoordinator::abort_timed_out_transactions() {
  const int64_t now = clock_.wall_ms();
  for (auto& [p, sp] : partitions_) {
    if (sp.loading) continue;
    for (auto& [id, md] : sp.txns) {
      if (md->state != S::ongoing || md->pending_transition_in_progress()) continue;
      if (md->txn_start_timestamp + md->txn_timeout_ms >= now) continue;
      auto fence = md->prepare_fence_producer_epoch();
      if (!fence) continue;
      RLOG_INFO("transactional id %s: aborting the transaction open for %lld ms (timeout %d ms)", id.c_str(),
                static_cast<long long>(now - md->txn_start_timestamp), md->txn_timeout_ms);
      asio::co_spawn(ex_, abort_timed_out(id, sp.coordinator_epoch, md, fence.value()), asio::detached);
    }
  }
}

awaitable<void> TransactionCoordinator::abort_timed_out(std::string transactional_id, int32_t coordinator_epoch,
                                                        std::shared_ptr<TransactionMetadata> md,
                                                        TxnTransitMetadata fence) {
  ErrorCode e = (co_await abort_fenced(transactional_id, md, fence)).error;
  if (e != ErrorCode::none) {
    RLOG_WARN("transactional id %s: aborting the timed-out transaction failed with error %d",
              transactional_id.c_str(), protocol::code(e));
    // A fence that was never written must not stay pending.
    if (still(transactional_id, coordinator_epoch, md) && md->pending_state == S::prepare_epoch_fence)
      md->pending_state.reset();
  }
}

void TransactionCoordinator::remove_expired_transactional_ids() {
  const int64_t now = clock_.wall_ms();
  for (auto& [p, sp] : partitions_) {
    if (sp.loading) continue;
    for (auto& [id, md] : sp.txns) {
      if (!is_expiration_allowed(md->state) || md->pending_transition_in_progress()) continue;
      if (md->txn_last_update_timestamp + config_.id_expiration_ms > now) continue;
      auto dead = md->prepare_dead();
      if (!dead) continue;
      asio::co_spawn(ex_, expire(id, sp.coordinator_epoch, md, dead.value()), asio::detached);
    }
  }
}

awaitable<void> TransactionCoordinator::expire(std::string transactional_id, int32_t coordinator_epoch,
                                               std::shared_ptr<TransactionMetadata> md, TxnTransitMetadata dead) {
  ErrorCode e = co_await append_transit(transactional_id, coordinator_epoch, md, dead);
  if (e != ErrorCode::none) {
    RLOG_WARN("transactional id %s: writing its expiry failed with error %d", transactional_id.c_str(),
              protocol::code(e));
    co_return;
  }
  if (!still(transactional_id, coordinator_epoch, md)) co_return;
  partitions_[partition_for(transactional_id)].txns.erase(transactional_id);
  RLOG_INFO("transactional id %s expired", transactional_id.c_str());
}

}  // namespace runnel::broker::transaction
