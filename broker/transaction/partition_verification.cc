#include "broker/transaction/partition_verification.h"

#include "broker/broker.h"
#include "broker/transaction/transaction_service.h"

namespace runnel::broker::transaction {

using protocol::ErrorCode;

bool needs_verification(const Broker& broker, const replication::Partition& part, int64_t producer_id,
                        int16_t producer_epoch) {
  return broker.config().get_bool("transaction.partition.verification.enable") &&
         !part.producers().has_ongoing_txn(producer_id, producer_epoch);
}

ErrorCode verify_partition(Broker& broker, const std::string& transactional_id, int64_t producer_id,
                           int16_t producer_epoch, const storage::TopicPartition& tp,
                           bool transaction_abortable_supported) {
  auto checked = broker.transactions().coordinator().verify_partitions(transactional_id, producer_id, producer_epoch,
                                                                       {tp});
  const ErrorCode e = checked.error != ErrorCode::none ? checked.error : checked.partitions[tp];
  switch (e) {
    case ErrorCode::producer_fenced:
      return ErrorCode::invalid_producer_epoch;
    case ErrorCode::transaction_abortable:
      return transaction_abortable_supported ? e : ErrorCode::invalid_txn_state;
    case ErrorCode::concurrent_transactions:
    case ErrorCode::network_exception:
    case ErrorCode::coordinator_load_in_progress:
    case ErrorCode::coordinator_not_available:
    case ErrorCode::not_coordinator:
      return ErrorCode::not_enough_replicas;
    default:
      return e;
  }
}

}  // namespace runnel::broker::transaction
