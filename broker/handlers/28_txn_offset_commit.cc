// TxnOffsetCommit (key 28): a transactional producer stores a group's
// offsets as part of its transaction (after AddOffsetsToTxn put the group's
// __consumer_offsets partition in it); they become the group's committed
// offsets when the transaction's COMMIT marker reaches that partition, and
// are dropped on ABORT (group/offset_metadata_manager.h).
//
// As Kafka's handleTxnOffsetCommitRequest: WRITE on the transactional id,
// else TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition; READ on
// the group, else GROUP_AUTHORIZATION_FAILED; an empty group id is
// INVALID_GROUP_ID; READ on each topic (TOPIC_AUTHORIZATION_FAILED) and an
// unknown partition UNKNOWN_TOPIC_OR_PARTITION, nothing stored for them.
// The member and generation (v3+) are checked as OffsetCommit's. The write
// is first verified with the transaction coordinator
// (transaction/partition_verification.h; TRANSACTION_ABORTABLE from v4),
// then the records go to the partition as the producer's transactional
// batch, whose epoch the partition checks (INVALID_PRODUCER_EPOCH). v5
// (transaction protocol v2, where the coordinator adds the partition
// itself) is not served: this broker finalizes no transaction.version.
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/completion.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "broker/transaction/partition_verification.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;

// The checks before the coordinator: one error for the whole request.
awaitable<ErrorCode> request_error(RequestContext& ctx, const p::TxnOffsetCommitRequest& req) {
  Broker& b = ctx.broker;
  if (!authorized(ctx, AclOperation::write, ResourceType::transactional_id, req.transactional_id))
    co_return ErrorCode::transactional_id_authorization_failed;
  if (!authorized(ctx, AclOperation::read, ResourceType::group, req.group_id))
    co_return ErrorCode::group_authorization_failed;
  if (req.group_id.empty()) co_return ErrorCode::invalid_group_id;
  auto part = b.replica_manager().get_partition(group::kOffsetsTopic,
                                                PartitionId(b.groups().coordinator().partition_for(req.group_id)));
  if (!part || !transaction::needs_verification(b, *part, req.producer_id, req.producer_epoch, ctx.api_version() >= 5))
    co_return ErrorCode::none;
  const storage::TopicPartition tp{std::string(group::kOffsetsTopic), part->index()};
  std::set<storage::TopicPartition> partitions{tp};
  // v5 is transaction protocol v2: no AddOffsetsToTxn came first, and the
  // coordinator adds the group's partition.
  auto answers = co_await transaction::verify_partitions(b, req.transactional_id, req.producer_id, req.producer_epoch,
                                                         std::move(partitions), ctx.api_version() >= 4,
                                                         ctx.api_version() >= 5);
  const ErrorCode e = answers[tp];
  // As GroupCoordinatorService maps a failed verification.
  co_return e == ErrorCode::not_enough_replicas ? ErrorCode::coordinator_not_available : e;
}

}  // namespace

template <>
awaitable<p::TxnOffsetCommitResponse> handle<p::TxnOffsetCommitApi>(RequestContext& ctx,
                                                                     p::TxnOffsetCommitRequest& req) {
  Broker& b = ctx.broker;
  const ErrorCode refused = co_await request_error(ctx, req);
  group::OffsetCommitRequest cr;
  cr.group_id = req.group_id;
  cr.generation = req.generation_id;
  cr.member_id = req.member_id;
  cr.group_instance_id = req.group_instance_id;
  cr.transaction = group::TxnProducer{req.producer_id, req.producer_epoch};
  for (auto& t : req.topics) {
    const bool may_read = authorized(ctx, AclOperation::read, ResourceType::topic, t.name);
    for (auto& part : t.partitions) {
      group::OffsetCommitEntry e;
      e.topic = t.name;
      e.partition = part.partition_index;
      e.offset = part.committed_offset;
      e.leader_epoch = part.committed_leader_epoch;
      e.metadata = part.committed_metadata;
      if (refused != ErrorCode::none) e.error = refused;
      else if (!may_read) e.error = ErrorCode::topic_authorization_failed;
      else if (!b.topics().has_partition(t.name, part.partition_index)) e.error = ErrorCode::unknown_topic_or_partition;
      cr.entries.push_back(std::move(e));
    }
  }
  // Answered once the records are stored as an acks=all produce is.
  if (refused == ErrorCode::none) {
    auto c = std::make_shared<group::Completion<group::OffsetCommitRequest>>(b.io().get_executor());
    b.groups().coordinator().commit_offsets(std::move(cr), group::completer(c));
    cr = co_await group::wait_for(c);
  }

  p::TxnOffsetCommitResponse resp;
  size_t i = 0;
  for (auto& t : req.topics) {
    auto& out = resp.topics.emplace_back();
    out.name = t.name;
    for (auto& part : t.partitions) {
      auto& op = out.partitions.emplace_back();
      op.partition_index = part.partition_index;
      op.error_code = p::code(cr.entries[i++].error);
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
