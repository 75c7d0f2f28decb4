// EndTxn (key 26): commit or abort. As Kafka's handleEndTxnRequest: WRITE
// on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then the
// coordinator writes PrepareCommit or PrepareAbort and answers; the markers
// follow (transaction/transaction_coordinator.h). v0-1 get
// INVALID_PRODUCER_EPOCH for PRODUCER_FENCED. v5 is transaction protocol
// v2 (KIP-890 part 2, the finalized transaction.version): every end bumps
// the producer epoch, and the answer names the producer id and epoch the
// client goes on with.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::EndTxnResponse> handle<p::EndTxnApi>(RequestContext& ctx, p::EndTxnRequest& req) {
  Broker& b = ctx.broker;
  p::EndTxnResponse resp;
  if (!authorized(ctx, AclOperation::write, ResourceType::transactional_id, req.transactional_id)) {
    resp.error_code = p::code(p::ErrorCode::transactional_id_authorization_failed);
    co_return resp;
  }
  const auto version =
      ctx.api_version() >= 5 ? transaction::TransactionVersion::tv2 : transaction::TransactionVersion::tv0;
  auto ended = co_await b.transactions().coordinator().end_transaction(req.transactional_id, req.producer_id,
                                                                       req.producer_epoch, req.committed, version);
  p::ErrorCode e = ended.error;
  if (e == p::ErrorCode::producer_fenced && ctx.api_version() < 2) e = p::ErrorCode::invalid_producer_epoch;
  resp.error_code = p::code(e);
  resp.producer_id = ended.producer_id;
  resp.producer_epoch = ended.producer_epoch;
  co_return resp;
}

}  // namespace runnel::broker
