// InitProducerId (key 22): a producer id and epoch. Without a transactional
// id Kafka always hands out a fresh id at epoch 0, also when the request
// names its current id and epoch (v3+, KIP-360): an idempotent producer
// bumps its epoch itself and the partition accepts the new epoch starting at
// sequence 0. Naming only one of id and epoch is INVALID_REQUEST, as
// KafkaApis answers before the coordinator sees the request. Without a
// transactional id, as Kafka: IDEMPOTENT_WRITE on the cluster or WRITE on
// some topic, else CLUSTER_AUTHORIZATION_FAILED. With one: WRITE on the
// transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then the
// transaction coordinator (transaction/transaction_coordinator.h), which
// bumps the epoch and fences the id's earlier producer; NOT_COORDINATOR on
// a broker that does not lead the id's __transaction_state partition.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

// Before v4 a client does not know PRODUCER_FENCED (KIP-588): Kafka answers
// INVALID_PRODUCER_EPOCH to it instead.
p::ErrorCode for_version(p::ErrorCode e, int16_t version) {
  return e == p::ErrorCode::producer_fenced && version < 4 ? p::ErrorCode::invalid_producer_epoch : e;
}

}  // namespace

template <>
awaitable<p::InitProducerIdResponse> handle<p::InitProducerIdApi>(RequestContext& ctx, p::InitProducerIdRequest& req) {
  p::InitProducerIdResponse resp;
  resp.producer_epoch = -1;
  if (req.transactional_id) {
    if (!authorized(ctx, AclOperation::write, ResourceType::transactional_id, *req.transactional_id)) {
      resp.error_code = p::code(p::ErrorCode::transactional_id_authorization_failed);
      co_return resp;
    }
  } else if (!authorized_on_cluster(ctx, AclOperation::idempotent_write) &&
             !authorized_by_resource_type(ctx, AclOperation::write, ResourceType::topic)) {
    resp.error_code = p::code(p::ErrorCode::cluster_authorization_failed);
    co_return resp;
  }
  if ((req.producer_id == -1) != (req.producer_epoch == -1)) {
    resp.error_code = p::code(p::ErrorCode::invalid_request);
    co_return resp;
  }
  if (req.transactional_id) {
    std::optional<transaction::ProducerIdAndEpoch> expected;
    if (req.producer_id != -1) expected = transaction::ProducerIdAndEpoch{req.producer_id, req.producer_epoch};
    transaction::InitProducerIdResult r = co_await ctx.broker.transactions().coordinator().init_producer_id(
        *req.transactional_id, req.transaction_timeout_ms, expected);
    resp.error_code = p::code(for_version(r.error, ctx.api_version()));
    resp.producer_id = r.producer_id;
    resp.producer_epoch = r.producer_epoch;
    co_return resp;
  }
  auto id = co_await ctx.broker.producer_ids().next();
  if (!id) {
    RLOG_ERROR("allocating a producer id: %s", id.error().message().c_str());
    resp.error_code = p::code(p::ErrorCode::kafka_storage_error);
    co_return resp;
  }
  resp.producer_id = *id;
  resp.producer_epoch = 0;
  co_return resp;
}

}  // namespace runnel::broker
