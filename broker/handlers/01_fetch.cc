// Fetch (key 1): whole record batches from each partition, sent straight
// from the segment files with sendfile(2).
//
// As Kafka's KafkaApis.handleFetch: a full fetch's partitions go into a map
// keyed by topic (id and name) and partition, so a partition named twice is
// read and answered once, with the last mention's offset and limits, in the
// place of its first mention. Limits: at most PartitionMaxBytes per
// partition and min(MaxBytes, fetch.max.bytes) in all, except that the
// first partition with data always returns at least one whole batch, so a
// batch larger than the limits can still be consumed (KIP-74).
// Long poll (replication/delayed_fetch.h): while fewer than MinBytes are ready
// and no partition has an error, the request waits up to MaxWaitMs.
// Fetch sessions (KIP-227, broker/fetch_session.h): SessionEpoch 0 makes
// one when the cache has room; an incremental fetch reads every partition
// of its session and answers only the ones that changed.
// v13+ names topics by id.
// A replica's fetch (replica id >= 0, replication/follower_fetch.h) reads
// to the log end offset, reports the follower's log end offset to the
// partition and may answer a diverging epoch; a consumer's is as above.
#include <map>
#include <string_view>
#include <tuple>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/fetch_session.h"
#include "broker/quota_managers.h"
#include "broker/handlers/handlers.h"
#include "broker/leader_hint.h"
#include "protocol/error_codes.h"
#include "replication/follower_fetch.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using PartitionData = p::FetchResponse::FetchableTopicResponse::PartitionData;

// Kafka's FetchRequest.fetchData: a LinkedHashMap keyed by TopicIdPartition,
// so a partition named twice is fetched once, with its last mention's
// parameters, in the place of its first.
std::vector<FetchItem> distinct_partitions(const p::FetchRequest& req) {
  std::map<FetchKey, size_t> seen;
  std::vector<FetchItem> out;
  for (const auto& ft : req.topics)
    for (const auto& fp : ft.partitions) {
      FetchItem item{ft.topic_id,          ft.topic,           fp.partition,          fp.fetch_offset,
                     fp.partition_max_bytes, fp.current_leader_epoch, fp.last_fetched_epoch, fp.log_start_offset};
      auto [it, fresh] = seen.try_emplace(FetchKey::of(item), out.size());
      if (fresh) out.push_back(std::move(item));
      else out[it->second] = std::move(item);
    }
  return out;
}

std::vector<FetchKey> forgotten_partitions(const p::FetchRequest& req) {
  std::vector<FetchKey> out;
  for (const auto& ft : req.forgotten_topics_data)
    for (int32_t partition : ft.partitions)
      out.push_back(FetchKey::of(FetchItem{ft.topic_id, ft.topic, partition}));
  return out;
}

// Kafka's FetchResponse.toMessage: consecutive partitions of one topic share
// a topic entry; the order of the request is kept.
bool same_topic(const FetchItem& a, const FetchItem& b) { return a.topic_id == b.topic_id && a.topic == b.topic; }

// Kafka's FetchManager.newContext: which partitions this fetch reads, and
// what it does with its session.
struct FetchContext {
  enum class Kind { sessionless, full, incremental } kind = Kind::sessionless;
  ErrorCode error = ErrorCode::none;
  std::vector<FetchItem> items;
  int32_t session_id = 0;      // incremental: the session
  int32_t expected_epoch = 0;  // incremental: the session's epoch once this fetch is answered
};

FetchContext new_context(FetchSessionCache& sessions, const p::FetchRequest& req, int16_t v) {
  FetchContext c;
  // SessionEpoch 0 and -1 are full fetches (v0-6 always send id 0, epoch -1).
  if (req.session_epoch == 0 || req.session_epoch == -1) {
    if (req.session_id != 0) sessions.remove(req.session_id);  // a full fetch closes the session it names
    c.kind = req.session_epoch == 0 ? FetchContext::Kind::full : FetchContext::Kind::sessionless;
    c.items = distinct_partitions(req);
    return c;
  }
  FetchSession* session = sessions.get(req.session_id);
  if (!session) c.error = ErrorCode::fetch_session_id_not_found;
  else if (session->epoch() != req.session_epoch) c.error = ErrorCode::invalid_fetch_session_epoch;
  else if (session->uses_topic_ids() != (v >= 13)) c.error = ErrorCode::fetch_session_topic_id_error;
  if (c.error != ErrorCode::none) return c;
  std::vector<FetchItem> requested = distinct_partitions(req);
  const std::vector<FetchKey> forgotten = forgotten_partitions(req);
  session->update(requested, forgotten);
  if (session->empty()) {
    // Nothing left to keep: the session goes, the fetch is sessionless.
    sessions.remove(session->id());
    c.items = std::move(requested);
    return c;
  }
  sessions.touch(*session, FetchSessionCache::Clock::now());
  session->advance_epoch();
  c.kind = FetchContext::Kind::incremental;
  c.session_id = session->id();
  c.expected_epoch = session->epoch();
  c.items.reserve(session->size());
  for (const auto& cp : session->partitions()) c.items.push_back(cp.request);
  return c;
}

// A full fetch's partitions, as the new session keeps them.
std::list<CachedPartition> session_partitions(const std::vector<FetchItem>& items,
                                              const std::vector<PartitionData>& data) {
  std::list<CachedPartition> out;
  for (size_t i = 0; i < items.size(); ++i) out.push_back({items[i], data[i].high_watermark, data[i].log_start_offset});
  return out;
}

// KIP-951 (v16+): a partition answered NOT_LEADER_OR_FOLLOWER or
// FENCED_LEADER_EPOCH says where its leader is now, and the response
// carries those leaders' endpoints.
void add_leader_hints(p::FetchResponse& resp, const cluster::MetadataImage& image, const std::string& listener) {
  LeaderHints hints(image, listener);
  for (auto& tr : resp.responses) {
    std::string name = tr.topic;
    if (name.empty())
      if (auto t = image.topic(tr.topic_id)) name = t->name;
    for (auto& pd : tr.partitions) {
      const auto error = static_cast<ErrorCode>(pd.error_code);
      if (error != ErrorCode::not_leader_or_follower && error != ErrorCode::fenced_leader_epoch) continue;
      const LeaderHint h = hints.current_leader(name, pd.partition_index);
      pd.current_leader = {h.leader_id, h.leader_epoch, {}};
    }
  }
  hints.add_endpoints(resp.node_endpoints);
}

// A follower that has caught up joins the ISR as soon as its fetch has
// moved its state (Kafka's maybeExpandIsr, in updateFollowerFetchState),
// before the fetch waits for data. A plain function: GCC 12 mishandles
// lambdas built inside a coroutine.
std::function<void()> isr_expansion(Broker& b, std::span<const replication::FetchPartition> partitions,
                                    NodeId follower) {
  return [&b, partitions, follower] {
    for (const auto& fp : partitions)
      if (fp.partition) b.alter_partitions()->maybe_expand_isr(*fp.partition, follower);
  };
}

}  // namespace

template <>
awaitable<p::FetchResponse> handle<p::FetchApi>(RequestContext& ctx, p::FetchRequest& req) {
  Broker& b = ctx.broker;
  const int16_t v = ctx.api_version();
  p::FetchResponse resp;
  resp.session_id = 0;
  FetchSessionCache& sessions = b.fetch_sessions();
  FetchContext fc = new_context(sessions, req, v);
  if (fc.error != ErrorCode::none) {
    resp.error_code = p::code(fc.error);
    co_return resp;
  }
  const std::vector<FetchItem>& items = fc.items;

  // Each partition is read into its own slot; the response takes the
  // slots it carries once the fetch is done.
  std::vector<PartitionData> data(items.size());
  std::vector<replication::FetchPartition> partitions;
  partitions.reserve(items.size());
  const auto replica = replication::replica_fetch_of(req, v, *b.metadata_cache());
  // Kafka's handleFetch: a follower needs CLUSTER_ACTION on the cluster, a
  // consumer READ on each topic; either refusal is TOPIC_AUTHORIZATION_FAILED.
  const bool follower_allowed = !replica || authorized_on_cluster(ctx, AclOperation::cluster_action);
  std::shared_ptr<Topic> topic;
  bool may_read = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const FetchItem& item = items[i];
    if (i == 0 || !same_topic(items[i - 1], item)) {
      topic = v >= 13 ? b.topics().find(item.topic_id) : b.topics().find(item.topic);
      const std::string& name = topic ? topic->name : item.topic;
      may_read = replica ? follower_allowed : authorized(ctx, AclOperation::read, ResourceType::topic, name);
    }
    PartitionData& pd = data[i];
    pd.partition_index = item.partition;
    pd.high_watermark = -1;
    pd.records = p::Records::view({});
    if (req.isolation_level == 0) pd.aborted_transactions = std::nullopt;
    // A v13+ topic id no topic has cannot be authorized by name: Kafka
    // answers it UNKNOWN_TOPIC_ID first.
    const bool refused = !may_read && (topic || v < 13);
    std::shared_ptr<Partition> part =
        topic && !refused ? b.replica_manager().get_partition(topic->name, PartitionId(item.partition)) : nullptr;
    if (refused)
      pd.error_code = p::code(ErrorCode::topic_authorization_failed);
    else if (!part)
      pd.error_code = p::code(v >= 13 && !topic ? ErrorCode::unknown_topic_id
                              : topic ? b.replica_manager().missing_partition_error(topic->name, PartitionId(item.partition))
                                      : ErrorCode::unknown_topic_or_partition);
    // Kafka's FetchRequest.optionalEpoch: a negative epoch is no epoch.
    std::optional<LeaderEpoch> epoch;
    if (item.current_leader_epoch >= 0) epoch = LeaderEpoch(item.current_leader_epoch);
    partitions.push_back({std::move(part), &pd, Offset(item.fetch_offset), item.max_bytes, epoch,
                          replication::last_fetched_epoch_of(item.last_fetched_epoch, v), Offset(item.log_start_offset)});
  }

  replication::FetchParams params;
  params.min_bytes = req.min_bytes;
  params.max_bytes = std::min<int64_t>(req.max_bytes, b.config().typed().fetch_max_bytes);
  // A consumer with a byte-rate quota gets at most what its quota allows
  // over the windows (Kafka's getMaxValueInQuotaWindow), so one response
  // cannot earn it an unbounded throttle.
  if (!replica)
    if (auto most = b.quotas().fetch().max_value_in_window(ctx.principal.name, ctx.client_id(), b.quotas().window())) {
      params.max_bytes = std::min<int64_t>(params.max_bytes, static_cast<int64_t>(std::min(*most, double{INT32_MAX})));
      params.min_bytes = static_cast<int32_t>(std::min<int64_t>(params.min_bytes, params.max_bytes));
    }
  // A broker shutting down answers with what it has.
  params.max_wait = std::chrono::milliseconds(b.stopping() ? 0 : req.max_wait_ms);
  params.isolation = req.isolation_level == 1 ? replication::FetchIsolation::txn_committed
                                              : replication::FetchIsolation::high_watermark;
  params.replica = replica;
  if (params.replica) params.isolation = replication::FetchIsolation::log_end;
  std::function<void()> expand_isr;
  if (params.replica && b.alter_partitions()) expand_isr = isr_expansion(b, partitions, params.replica->replica);
  co_await b.replica_manager().fetch_messages(partitions, params, std::move(expand_isr));

  // Which partitions the response carries: all of a full fetch; of an
  // incremental one those that changed (Kafka's IncrementalFetchContext).
  // The session learns what was sent only once the response is sure to go
  // unthrottled.
  std::vector<bool> carried(items.size(), true);
  FetchSession* session = nullptr;
  if (fc.kind == FetchContext::Kind::incremental) {
    // The session may have moved on while this fetch waited: another
    // request with the same epoch, or an eviction. Its reads are dropped.
    session = sessions.get(fc.session_id);
    if (!session || session->epoch() != fc.expected_epoch) {
      resp.error_code = p::code(session ? ErrorCode::invalid_fetch_session_epoch : ErrorCode::fetch_session_id_not_found);
      if (session) resp.session_id = fc.session_id;
      co_return resp;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      CachedPartition* cp = session->find(FetchKey::of(items[i]));
      carried[i] = cp && cp->must_respond(data[i], false);
    }
    resp.session_id = fc.session_id;
  }
  std::list<CachedPartition> new_session;
  if (fc.kind == FetchContext::Kind::full) new_session = session_partitions(items, data);

  const FetchItem* previous = nullptr;  // the last partition carried
  for (size_t i = 0; i < items.size(); ++i) {
    if (!carried[i]) continue;
    if (!previous || !same_topic(*previous, items[i])) {
      auto& tr = resp.responses.emplace_back();
      tr.topic = items[i].topic;
      tr.topic_id = items[i].topic_id;
    }
    resp.responses.back().partitions.push_back(std::move(data[i]));
    previous = &items[i];
  }
  if (v >= 16) add_leader_hints(resp, *b.metadata_cache(), ctx.listener_name);

  // Client quotas (consumers only): the response's bytes against
  // consumer_byte_rate and the request's time against request_percentage.
  // Over either, Kafka takes the bytes back and answers no partitions
  // (FetchContext.getThrottledResponse): the consumer fetches them again
  // once the throttle has passed, and a full fetch opens no session.
  if (!replica) {
    QuotaManagers& quotas = b.quotas();
    // Sizing the response is a walk over it: only while a fetch quota exists.
    const double bytes = quotas.fetch().enabled() ? static_cast<double>(resp.size(v)) : 0;
    const int64_t bandwidth_throttle = quotas.record_bytes(quotas.fetch(), ctx, bytes);
    const int64_t request_throttle = quotas.record_request_time(ctx);
    quotas.throttle_larger(quotas.fetch(), ctx, bandwidth_throttle, request_throttle);
    if (bandwidth_throttle > 0 || request_throttle > 0) {
      quotas.unrecord_bytes(quotas.fetch(), ctx, bytes);
      resp.responses.clear();
      resp.node_endpoints.clear();
      co_return resp;
    }
  } else {
    ctx.quotas_recorded = true;  // a follower's fetch is exempt
  }

  // The partitions sent, in the order of the items they answer.
  size_t next_item = 0;
  for (auto& tr : resp.responses)
    for (auto& pd : tr.partitions) {
      while (!carried[next_item]) ++next_item;
      const size_t i = next_item++;
      if (session) {
        const FetchKey key = FetchKey::of(items[i]);
        if (CachedPartition* cp = session->find(key)) cp->must_respond(pd, true);
        if (pd.records.size() > 0) session->move_to_back(key);
      }
      // Kafka's BytesOutPerSec: what consumers are sent, not followers.
      if (!params.replica && partitions[i].partition && pd.error_code == 0)
        partitions[i].partition->count_bytes_out(pd.records.size());
    }
  if (fc.kind == FetchContext::Kind::full)
    resp.session_id =
        sessions.maybe_create(FetchSessionCache::Clock::now(), replica.has_value(), v >= 13, std::move(new_session));

  co_return resp;
}

}  // namespace runnel::broker
