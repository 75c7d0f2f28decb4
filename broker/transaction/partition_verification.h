// KIP-890 part 1 (transaction.partition.verification.enable, Kafka's
// default): a transactional write that would open a transaction on a
// partition (a Produce, a TxnOffsetCommit on the group's __consumer_offsets
// partition) is first checked with the transaction coordinator, which must
// have the partition in the producer's ongoing transaction, so that a late
// write after an abort cannot open a transaction nobody will end (Kafka's
// ReplicaManager.maybeStartTransactionVerificationForPartition and
// AddPartitionsToTxnManager).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "broker/asio.h"

#include "protocol/error_codes.h"
#include "storage/topic_partition.h"

namespace runnel::replication {
class Partition;
}

namespace runnel::broker {
class Broker;
}

namespace runnel::broker::transaction {

// Whether the producer's transactional write to `part` must be verified:
// verification is on, or the client speaks transaction protocol v2 (`add`:
// its partitions reach the transaction no other way), and the producer has
// no transaction open there at this epoch.
bool verification_on(const Broker& broker, bool add);
bool needs_verification(const Broker& broker, const replication::Partition& part, int64_t producer_id,
                        int16_t producer_epoch, bool add = false);

// Asks the coordinator about every partition at once: this broker's own,
// or in a cluster the leader of the id's __transaction_state partition by
// AddPartitionsToTxn v4 verify_only. Per partition NONE, or the answer as
// Kafka's AddPartitionsToTxnManager passes it on: PRODUCER_FENCED as
// INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE as INVALID_TXN_STATE to a
// client whose version predates it, and the retriable coordinator errors
// (a coordinator not known or not reached too) as NOT_ENOUGH_REPLICAS,
// which every client retries. `add` (a client of transaction protocol v2,
// KIP-890 part 2: Produce v12+, TxnOffsetCommit v5+) has the coordinator
// add the partitions to the transaction, which the client did not.
awaitable<std::map<storage::TopicPartition, protocol::ErrorCode>> verify_partitions(
    Broker& broker, std::string transactional_id, int64_t producer_id, int16_t producer_epoch,
    std::set<storage::TopicPartition> partitions, bool transaction_abortable_supported, bool add = false);

}  // namespace runnel::broker::transaction
