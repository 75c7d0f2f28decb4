// InitProducerId (key 22): a producer id and epoch for an idempotent
// producer. Without a transactional id Kafka always hands out a fresh id at
// epoch 0, also when the request names its current id and epoch (v3+,
// KIP-360): an idempotent producer bumps its epoch itself and the partition
// accepts the new epoch starting at sequence 0. Naming only one of id and
// epoch is INVALID_REQUEST, as KafkaApis answers before the coordinator sees
// the request. Transactions are not implemented yet, so a transactional id
// is refused. Without one, as Kafka: IDEMPOTENT_WRITE on the cluster or
// WRITE on some topic, else CLUSTER_AUTHORIZATION_FAILED.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::InitProducerIdResponse> handle<p::InitProducerIdApi>(RequestContext& ctx, p::InitProducerIdRequest& req) {
  p::InitProducerIdResponse resp;
  resp.producer_epoch = -1;
  if (req.transactional_id) {
    resp.error_code = p::code(p::ErrorCode::transactional_id_authorization_failed);
    co_return resp;
  }
  if (!authorized_on_cluster(ctx, AclOperation::idempotent_write) &&
      !authorized_by_resource_type(ctx, AclOperation::write, ResourceType::topic)) {
    resp.error_code = p::code(p::ErrorCode::cluster_authorization_failed);
    co_return resp;
  }
  if ((req.producer_id == -1) != (req.producer_epoch == -1)) {
    resp.error_code = p::code(p::ErrorCode::invalid_request);
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
