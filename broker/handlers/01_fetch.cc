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
// Fetch sessions (KIP-227) are not kept: every response carries session id
// 0, which tells clients to send full fetches; they all support that.
// v13+ names topics by id.
// A replica's fetch (replica id >= 0, replication/follower_fetch.h) reads
// to the log end offset, reports the follower's log end offset to the
// partition and may answer a diverging epoch; a consumer's is as above.
#include <map>
#include <string_view>
#include <tuple>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/leader_hint.h"
#include "protocol/error_codes.h"
#include "replication/follower_fetch.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using FetchTopic = p::FetchRequest::FetchTopic;
using RequestPartition = FetchTopic::FetchPartition;

// One distinct partition of the request, at the place of its first mention.
struct Wanted {
  const FetchTopic* topic;
  const RequestPartition* partition;  // the last mention: its offset and limits count
};

// Kafka's FetchRequest.fetchData: a LinkedHashMap keyed by TopicIdPartition.
std::vector<Wanted> distinct_partitions(const p::FetchRequest& req) {
  using Key = std::tuple<p::Uuid, std::string_view, int32_t>;
  std::map<Key, size_t> seen;
  std::vector<Wanted> out;
  for (const auto& ft : req.topics)
    for (const auto& fp : ft.partitions) {
      auto [it, fresh] = seen.try_emplace(Key{ft.topic_id, ft.topic, fp.partition}, out.size());
      if (fresh) out.push_back({&ft, &fp});
      else out[it->second].partition = &fp;
    }
  return out;
}

// Kafka's FetchResponse.toMessage: consecutive partitions of one topic share
// a topic entry; the order of the request is kept.
bool same_topic(const FetchTopic& a, const FetchTopic& b) { return a.topic_id == b.topic_id && a.topic == b.topic; }

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
  if (req.session_id != 0) {
    // We never hand out a session, so the client cannot know one.
    resp.error_code = p::code(ErrorCode::fetch_session_id_not_found);
    co_return resp;
  }

  std::vector<Wanted> wanted = distinct_partitions(req);
  std::vector<replication::FetchPartition> partitions;
  partitions.reserve(wanted.size());
  const auto replica = replication::replica_fetch_of(req, v, *b.metadata_cache());
  // Kafka's handleFetch: a follower needs CLUSTER_ACTION on the cluster, a
  // consumer READ on each topic; either refusal is TOPIC_AUTHORIZATION_FAILED.
  const bool follower_allowed = !replica || authorized_on_cluster(ctx, AclOperation::cluster_action);
  std::shared_ptr<Topic> topic;
  bool may_read = false;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const FetchTopic& ft = *wanted[i].topic;
    const RequestPartition& fp = *wanted[i].partition;
    if (i == 0 || !same_topic(*wanted[i - 1].topic, ft)) {
      auto& tr = resp.responses.emplace_back();
      tr.topic = ft.topic;
      tr.topic_id = ft.topic_id;
      topic = v >= 13 ? b.topics().find(ft.topic_id) : b.topics().find(ft.topic);
      const std::string& name = topic ? topic->name : ft.topic;
      may_read = replica ? follower_allowed : authorized(ctx, AclOperation::read, ResourceType::topic, name);
    }
    auto& pd = resp.responses.back().partitions.emplace_back();
    pd.partition_index = fp.partition;
    pd.high_watermark = -1;
    pd.records = p::Records::view({});
    if (req.isolation_level == 0) pd.aborted_transactions = std::nullopt;
    // A v13+ topic id no topic has cannot be authorized by name: Kafka
    // answers it UNKNOWN_TOPIC_ID first.
    const bool refused = !may_read && (topic || v < 13);
    std::shared_ptr<Partition> part =
        topic && !refused ? b.replica_manager().get_partition(topic->name, PartitionId(fp.partition)) : nullptr;
    if (refused)
      pd.error_code = p::code(ErrorCode::topic_authorization_failed);
    else if (!part)
      pd.error_code = p::code(v >= 13 && !topic ? ErrorCode::unknown_topic_id
                              : topic ? b.replica_manager().missing_partition_error(topic->name, PartitionId(fp.partition))
                                      : ErrorCode::unknown_topic_or_partition);
    // Kafka's FetchRequest.optionalEpoch: a negative epoch is no epoch.
    std::optional<LeaderEpoch> epoch;
    if (fp.current_leader_epoch >= 0) epoch = LeaderEpoch(fp.current_leader_epoch);
    partitions.push_back({std::move(part), nullptr, Offset(fp.fetch_offset), fp.partition_max_bytes, epoch,
                          replication::last_fetched_epoch_of(fp, v), Offset(fp.log_start_offset)});
  }
  // The response is whole now: its slots stay put.
  auto next = partitions.begin();
  for (auto& tr : resp.responses)
    for (auto& pd : tr.partitions) (next++)->out = &pd;

  replication::FetchParams params;
  params.min_bytes = req.min_bytes;
  params.max_bytes = std::min<int64_t>(req.max_bytes, b.config().typed().fetch_max_bytes);
  // A broker shutting down answers with what it has.
  params.max_wait = std::chrono::milliseconds(b.stopping() ? 0 : req.max_wait_ms);
  params.isolation = req.isolation_level == 1 ? replication::FetchIsolation::txn_committed
                                              : replication::FetchIsolation::high_watermark;
  params.replica = replica;
  if (params.replica) params.isolation = replication::FetchIsolation::log_end;
  std::function<void()> expand_isr;
  if (params.replica && b.alter_partitions()) expand_isr = isr_expansion(b, partitions, params.replica->replica);
  co_await b.replica_manager().fetch_messages(partitions, params, std::move(expand_isr));
  // Kafka's BytesOutPerSec: what consumers are sent, not followers.
  if (!params.replica)
    for (auto& f : partitions)
      if (f.partition && f.out->error_code == 0) f.partition->count_bytes_out(f.out->records.size());
  if (v >= 16) add_leader_hints(resp, *b.metadata_cache(), ctx.listener_name);
  co_return resp;
}

}  // namespace runnel::broker
