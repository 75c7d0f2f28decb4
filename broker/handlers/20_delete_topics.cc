// DeleteTopics (key 20): removes topics by name (v1-5) or by name or id
// (v6+). Refused with TOPIC_DELETION_DISABLED when delete.topic.enable is
// false. The partition directories are renamed "*-delete" at once and
// removed after file.delete.delay.ms, as Kafka does. Each topic needs
// DELETE (TOPIC_AUTHORIZATION_FAILED); one named by id without DESCRIBE is
// answered as unknown, as Kafka hides it.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;

awaitable<p::DeleteTopicsResponse::DeletableTopicResult> delete_one(const RequestContext& ctx,
                                                                    std::optional<std::string> name, p::Uuid id) {
  Broker& b = ctx.broker;
  p::DeleteTopicsResponse::DeletableTopicResult r;
  r.name = name;
  r.topic_id = id;
  if (name && !authorized(ctx, AclOperation::delete_, ResourceType::topic, *name)) {
    r.error_code = p::code(ErrorCode::topic_authorization_failed);
    r.error_message = "Authorization failed.";
    co_return r;
  }
  std::shared_ptr<Topic> topic = name ? b.topics().find(*name) : b.topics().find(id);
  if (topic && !name && !authorized(ctx, AclOperation::describe, ResourceType::topic, topic->name)) topic = nullptr;
  if (topic && !name && !authorized(ctx, AclOperation::delete_, ResourceType::topic, topic->name)) {
    r.error_code = p::code(ErrorCode::topic_authorization_failed);
    r.error_message = "Authorization failed.";
    co_return r;
  }
  if (!topic) {
    r.error_code = p::code(name ? ErrorCode::unknown_topic_or_partition : ErrorCode::unknown_topic_id);
    r.error_message = name ? "This server does not host this topic-partition." : "This server does not host this topic ID.";
    co_return r;
  }
  r.name = topic->name;
  r.topic_id = topic->id;
  if (!b.config().typed().delete_topic_enable) {
    r.error_code = p::code(ErrorCode::topic_deletion_disabled);
    r.error_message = "Topic deletion is disabled.";
    co_return r;
  }
  TopicError err = co_await b.topic_frontend().remove(topic->name);
  r.error_code = p::code(err.code);
  if (!err.ok()) r.error_message = err.message;
  co_return r;
}

}  // namespace

template <>
awaitable<p::DeleteTopicsResponse> handle<p::DeleteTopicsApi>(RequestContext& ctx, p::DeleteTopicsRequest& req) {
  p::DeleteTopicsResponse resp;
  if (ctx.api_version() >= 6) {
    for (auto& t : req.topics) resp.responses.push_back(co_await delete_one(ctx, t.name, t.topic_id));
  } else {
    for (auto& name : req.topic_names) resp.responses.push_back(co_await delete_one(ctx, name, {}));
  }
  co_return resp;
}

}  // namespace runnel::broker
