#include "broker/config_def.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "broker/config.h"

namespace runnel::broker {

namespace {

using T = ConfigType;
using I = Importance;
constexpr int64_t kIntMax = INT32_MAX;
constexpr int64_t kNoMin = INT64_MIN;
constexpr int64_t kNoMax = INT64_MAX;
constexpr const char* kLongMax = "9223372036854775807";
constexpr DynamicUpdate kDynamic = DynamicUpdate::cluster_wide;
constexpr DynamicUpdate kPerListener = DynamicUpdate::per_listener;

Validator range(int64_t min, int64_t max = kNoMax) { return {min, max}; }
Validator at_least(int64_t min) { return {min, kNoMax}; }
Validator one_of(std::vector<std::string> values) { return {kNoMin, kNoMax, std::move(values)}; }

// listeners / advertised.listeners: NAME://host:port, each name once.
std::string check_listeners(std::string_view, std::string_view value) {
  std::vector<Listener> parsed;
  return parse_listeners(value, parsed);
}
Validator listener_list() { return {kNoMin, kNoMax, {}, check_listeners}; }

// runnel.admin.listeners: http://host:port or https://host:port (broker/admin/admin_server.h).
std::string check_admin_listeners(std::string_view, std::string_view value) {
  std::vector<Listener> parsed;
  if (auto err = parse_listeners(value, parsed); !err.empty()) return err;
  for (const auto& l : parsed)
    if (l.name != "http" && l.name != "https") return "an admin listener must be http://host:port or https://host:port";
  return "";
}

const std::vector<std::string> kCompressionTypes = {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"};
const std::vector<std::string> kCleanupPolicies = {"compact", "delete"};
const std::vector<std::string> kTimestampTypes = {"CreateTime", "LogAppendTime"};
constexpr const char* kSingleController = "a single Runnel node is its own controller";
constexpr const char* kKernelBuffers = "sockets keep the kernel's default buffer sizes";
constexpr const char* kOpenSsl = "TLS is OpenSSL's: the version is negotiated within ssl.enabled.protocols, with OpenSSL's key and trust handling and random numbers";
constexpr const char* kNoBrokerTls = "a single node connects to no other broker (a cluster's replica fetchers check the leader's host name with it)";
constexpr const char* kBackgroundCleaner = "the cleaner runs in the periodic background log work";

// KafkaConfig's keys (ServerConfigs, ServerLogConfigs, SocketServerConfigs,
// GroupCoordinatorConfig, TransactionLogConfig, KRaftConfigs) that Runnel
// knows, with Kafka's defaults. Dynamic: the first broker synonym of each
// topic config (Kafka's DynamicLogConfig.ReconfigurableConfigs).
const std::vector<ConfigKey> kBrokerKeys = {
    // Identity and listeners.
    {"node.id", T::int_, "-1", range(-1, kIntMax), I::high},
    {"broker.id", T::int_, "-1", range(-1, kIntMax), I::high},
    {"listeners", T::list, "PLAINTEXT://:9092", listener_list(), I::high},
    {"advertised.listeners", T::list, nullptr, listener_list(), I::high},
    {"listener.security.protocol.map", T::list,
     "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", {}, I::low},
    // The listener brokers reach each other on (a cluster's replica fetches);
    // unset: the listener security.inter.broker.protocol names when that is
    // set, else the first listener (security_config.h).
    {"inter.broker.listener.name", T::string, nullptr, {}, I::medium, nullptr, DynamicUpdate::read_only},
    {"security.inter.broker.protocol", T::string, "PLAINTEXT", one_of({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}),
     I::medium},
    {"broker.rack", T::string, nullptr, {}, I::medium},
    // Authorization (security/authorizer/): empty authorizer.class.name is
    // Kafka's default, no authorizer (security_config.h names the accepted classes).
    {"authorizer.class.name", T::string, "", {}, I::low},
    {"super.users", T::string, nullptr, {}, I::low},
    {"allow.everyone.if.no.acl.found", T::boolean, "false", {}, I::low},
    // TLS (SslConfigs, BrokerSecurityConfigs), each also settable per
    // listener as listener.name.<listener>.ssl.* (security/ssl_engine_factory.h).
    // The key and trust stores are reloadable per listener (security/ssl_factory.h).
    {"ssl.keystore.type", T::string, "JKS", {}, I::medium, nullptr, kPerListener},
    {"ssl.keystore.location", T::string, nullptr, {}, I::high, nullptr, kPerListener},
    {"ssl.keystore.password", T::password, nullptr, {}, I::high, nullptr, kPerListener},
    {"ssl.key.password", T::password, nullptr, {}, I::high, nullptr, kPerListener},
    {"ssl.keystore.key", T::password, nullptr, {}, I::high, nullptr, kPerListener},
    {"ssl.keystore.certificate.chain", T::password, nullptr, {}, I::high, nullptr, kPerListener},
    {"ssl.truststore.type", T::string, "JKS", {}, I::medium, nullptr, kPerListener},
    {"ssl.truststore.location", T::string, nullptr, {}, I::high, nullptr, kPerListener},
    {"ssl.truststore.password", T::password, nullptr, {}, I::high, nullptr, kPerListener},
    {"ssl.truststore.certificates", T::password, nullptr, {}, I::high, nullptr, kPerListener},
    {"ssl.client.auth", T::string, "none", one_of({"required", "requested", "none"}), I::medium},
    {"ssl.enabled.protocols", T::list, "TLSv1.2,TLSv1.3", {}, I::medium},
    {"ssl.cipher.suites", T::list, nullptr, {}, I::low},
    {"ssl.principal.mapping.rules", T::string, "DEFAULT", {}, I::low},
    {"ssl.protocol", T::string, "TLSv1.3", {}, I::medium, nullptr, DynamicUpdate::read_only, kOpenSsl},
    {"ssl.provider", T::string, nullptr, {}, I::medium, nullptr, DynamicUpdate::read_only, kOpenSsl},
    {"ssl.keymanager.algorithm", T::string, "SunX509", {}, I::low, nullptr, DynamicUpdate::read_only, kOpenSsl},
    {"ssl.trustmanager.algorithm", T::string, "PKIX", {}, I::low, nullptr, DynamicUpdate::read_only, kOpenSsl},
    {"ssl.secure.random.implementation", T::string, nullptr, {}, I::low, nullptr, DynamicUpdate::read_only, kOpenSsl},
    {"ssl.endpoint.identification.algorithm", T::string, "https", {}, I::low, nullptr, DynamicUpdate::read_only,
     kNoBrokerTls, true},
    // SASL (BrokerSecurityConfigs, SaslConfigs), each also settable per
    // listener (listener.name.<listener>.*) and the JAAS line and
    // re-authentication period per mechanism
    // (listener.name.<listener>.<mechanism>.sasl.jaas.config): broker/security_config.h.
    {"sasl.enabled.mechanisms", T::list, "GSSAPI", {}, I::medium},
    {"sasl.mechanism.inter.broker.protocol", T::string, "GSSAPI", {}, I::medium},
    {"sasl.jaas.config", T::password, nullptr, {}, I::medium},
    {"sasl.server.max.receive.size", T::int_, "524288", {}, I::low},
    {"connections.max.reauth.ms", T::long_, "0", {}, I::medium},
    {"ssl.allow.dn.changes", T::boolean, "false", {}, I::low},
    {"ssl.allow.san.changes", T::boolean, "false", {}, I::low},
    // Log directories.
    {"log.dirs", T::list, nullptr, {}, I::high},
    {"log.dir", T::string, "/tmp/kafka-logs", {}, I::high},
    // Topic defaults.
    {"num.partitions", T::int_, "1", at_least(1), I::medium},
    {"default.replication.factor", T::int_, "1", at_least(1), I::medium},
    {"auto.create.topics.enable", T::boolean, "true", {}, I::high},
    {"delete.topic.enable", T::boolean, "true", {}, I::high},
    {"min.insync.replicas", T::int_, "1", at_least(1), I::high, nullptr, kDynamic},
    {"message.max.bytes", T::int_, "1048588", at_least(0), I::high, nullptr, kDynamic},
    {"compression.type", T::string, "producer", one_of(kCompressionTypes), I::high, nullptr, kDynamic},
    {"compression.gzip.level", T::int_, "-1", range(-1, 9), I::medium, nullptr, kDynamic},
    {"compression.lz4.level", T::int_, "9", range(1, 17), I::medium, nullptr, kDynamic},
    {"compression.zstd.level", T::int_, "3", range(-131072, 22), I::medium, nullptr, kDynamic},
    // Network.
    {"socket.request.max.bytes", T::int_, "104857600", at_least(1), I::high},
    {"socket.send.buffer.bytes", T::int_, "102400", at_least(-1), I::high, nullptr, DynamicUpdate::read_only,
     kKernelBuffers},
    {"socket.receive.buffer.bytes", T::int_, "102400", at_least(-1), I::high, nullptr, DynamicUpdate::read_only,
     kKernelBuffers},
    {"connections.max.idle.ms", T::long_, "600000", {}, I::medium},
    // Kafka's ConnectionQuotas (broker/connection_quotas.h); the first and
    // the last also per listener (listener.name.<l>.*).
    {"max.connections", T::int_, "2147483647", at_least(0), I::medium, nullptr, kDynamic},
    {"max.connections.per.ip", T::int_, "2147483647", at_least(0), I::medium, nullptr, kDynamic},
    {"max.connections.per.ip.overrides", T::string, "", {}, I::medium, nullptr, kDynamic},
    {"max.connection.creation.rate", T::int_, "2147483647", at_least(0), I::medium, nullptr, kDynamic},
    // Client quotas (broker/quota_managers.h): how rates are measured.
    {"quota.window.num", T::int_, "11", at_least(1), I::low},
    {"quota.window.size.seconds", T::int_, "1", at_least(1), I::low},
    {"queued.max.requests", T::int_, "500", at_least(1), I::high, nullptr, DynamicUpdate::read_only,
     "each connection serves one request at a time; queued.max.request.bytes bounds memory"},
    {"queued.max.request.bytes", T::long_, "-1", {}, I::medium},
    {"num.network.threads", T::int_, "3", at_least(1), I::high, nullptr, DynamicUpdate::read_only,
     "one event-loop thread serves every connection"},
    {"num.io.threads", T::int_, "8", at_least(1), I::high},
    {"request.timeout.ms", T::int_, "30000", at_least(0), I::high},
    {"fetch.max.bytes", T::int_, "57671680", at_least(1024), I::medium},  // caps a Fetch response's records
    {"max.incremental.fetch.session.cache.slots", T::int_, "1000", at_least(0), I::medium},  // broker/fetch_session.h
    // Log segments, retention, flushing (log.* are defaults of topic configs).
    {"log.segment.bytes", T::int_, "1073741824", at_least(14), I::high, nullptr, kDynamic},
    {"log.roll.ms", T::long_, nullptr, at_least(1), I::high, nullptr, kDynamic},
    {"log.roll.hours", T::int_, "168", at_least(1), I::high},
    {"log.roll.jitter.ms", T::long_, nullptr, at_least(0), I::high, nullptr, kDynamic},
    {"log.roll.jitter.hours", T::int_, "0", at_least(0), I::high},
    {"log.index.size.max.bytes", T::int_, "10485760", at_least(4), I::medium, nullptr, kDynamic},
    {"log.index.interval.bytes", T::int_, "4096", at_least(0), I::medium, nullptr, kDynamic},
    {"log.retention.ms", T::long_, nullptr, at_least(-1), I::high, nullptr, kDynamic},
    {"log.retention.minutes", T::int_, nullptr, at_least(-1), I::high},
    {"log.retention.hours", T::int_, "168", at_least(-1), I::high},
    {"log.retention.bytes", T::long_, "-1", at_least(-1), I::high, nullptr, kDynamic},
    {"log.retention.check.interval.ms", T::long_, "300000", at_least(1), I::medium},
    {"log.segment.delete.delay.ms", T::long_, "60000", at_least(0), I::high, nullptr, kDynamic},
    {"log.flush.interval.messages", T::long_, kLongMax, at_least(1), I::high, nullptr, kDynamic},
    {"log.flush.interval.ms", T::long_, nullptr, at_least(0), I::high, nullptr, kDynamic},
    {"log.flush.scheduler.interval.ms", T::long_, kLongMax, at_least(0), I::high},
    {"log.flush.offset.checkpoint.interval.ms", T::int_, "60000", at_least(0), I::high},
    {"log.flush.start.offset.checkpoint.interval.ms", T::int_, "60000", at_least(0), I::high, nullptr,
     DynamicUpdate::read_only, "log start offsets are checkpointed with the recovery points"},
    {"log.cleanup.policy", T::list, "delete", one_of(kCleanupPolicies), I::medium, nullptr, kDynamic},
    {"log.cleaner.enable", T::boolean, "true", {}, I::medium},
    {"log.cleaner.threads", T::int_, "1", at_least(0), I::medium, nullptr, DynamicUpdate::read_only, kBackgroundCleaner},
    {"log.cleaner.backoff.ms", T::long_, "15000", at_least(0), I::medium, nullptr, DynamicUpdate::read_only,
     kBackgroundCleaner},
    {"log.cleaner.min.cleanable.ratio", T::double_, "0.5", range(0, 1), I::medium, nullptr, kDynamic},
    {"log.cleaner.delete.retention.ms", T::long_, "86400000", at_least(0), I::medium, nullptr, kDynamic},
    {"log.cleaner.min.compaction.lag.ms", T::long_, "0", at_least(0), I::medium, nullptr, kDynamic},
    {"log.cleaner.max.compaction.lag.ms", T::long_, kLongMax, at_least(1), I::medium, nullptr, kDynamic},
    {"log.message.timestamp.type", T::string, "CreateTime", one_of(kTimestampTypes), I::medium, nullptr, kDynamic},
    {"log.message.timestamp.before.max.ms", T::long_, kLongMax, at_least(0), I::medium, nullptr, kDynamic},
    {"log.message.timestamp.after.max.ms", T::long_, "3600000", at_least(0), I::medium, nullptr, kDynamic},
    {"log.preallocate", T::boolean, "false", {}, I::medium, nullptr, kDynamic},
    {"unclean.leader.election.enable", T::boolean, "false", {}, I::high, nullptr, kDynamic},
    // The threads per log dir that close the logs at shutdown, as Kafka's;
    // at startup the logs load one after another as their topics are read.
    {"num.recovery.threads.per.data.dir", T::int_, "2", at_least(1), I::high},
    // Groups and offsets.
    {"offsets.topic.num.partitions", T::int_, "50", at_least(1), I::high},
    {"offsets.topic.replication.factor", T::int_, "3", range(1, INT16_MAX), I::high, nullptr, DynamicUpdate::read_only,
     "a single node creates __consumer_offsets with replication factor 1", true},
    {"offsets.topic.segment.bytes", T::int_, "104857600", at_least(1), I::high},
    {"offsets.retention.minutes", T::int_, "10080", at_least(1), I::high},
    {"offsets.retention.check.interval.ms", T::long_, "600000", at_least(1), I::high},
    {"offsets.commit.timeout.ms", T::int_, "5000", at_least(1), I::high, nullptr, DynamicUpdate::read_only,
     "a commit completes when its append does"},
    {"offset.metadata.max.bytes", T::int_, "4096", at_least(0), I::high},
    {"group.initial.rebalance.delay.ms", T::int_, "3000", at_least(0), I::medium},
    {"group.min.session.timeout.ms", T::int_, "6000", at_least(0), I::medium},
    {"group.max.session.timeout.ms", T::int_, "1800000", at_least(0), I::medium},
    {"group.max.size", T::int_, "2147483647", at_least(1), I::medium},
    // KIP-848 consumer groups (ConsumerGroupHeartbeat).
    {"group.consumer.session.timeout.ms", T::int_, "45000", at_least(1), I::medium},
    {"group.consumer.min.session.timeout.ms", T::int_, "45000", at_least(1), I::medium},
    {"group.consumer.max.session.timeout.ms", T::int_, "60000", at_least(1), I::medium},
    {"group.consumer.heartbeat.interval.ms", T::int_, "5000", at_least(1), I::medium},
    {"group.consumer.min.heartbeat.interval.ms", T::int_, "5000", at_least(1), I::medium},
    {"group.consumer.max.heartbeat.interval.ms", T::int_, "15000", at_least(1), I::medium},
    {"group.consumer.max.size", T::int_, "2147483647", at_least(1), I::medium},
    {"group.consumer.assignors", T::list, "uniform,range", one_of({"uniform", "range"}), I::medium},
    // Producers and transactions.
    {"producer.id.expiration.ms", T::int_, "86400000", at_least(1), I::low},
    {"producer.id.expiration.check.interval.ms", T::int_, "600000", at_least(1), I::low},
    {"transactional.id.expiration.ms", T::int_, "604800000", at_least(1), I::high, nullptr, DynamicUpdate::read_only},
    {"transaction.state.log.num.partitions", T::int_, "50", at_least(1), I::high, nullptr, DynamicUpdate::read_only},
    {"transaction.state.log.replication.factor", T::int_, "3", range(1, INT16_MAX), I::high, nullptr,
     DynamicUpdate::read_only, "a single node creates __transaction_state with replication factor 1", true},
    {"transaction.state.log.min.isr", T::int_, "2", at_least(1), I::high, nullptr, DynamicUpdate::read_only,
     "a single node's __transaction_state has one replica, so its min.insync.replicas is 1", true},
    {"transaction.state.log.segment.bytes", T::int_, "104857600", at_least(1), I::high, nullptr,
     DynamicUpdate::read_only},
    {"transaction.max.timeout.ms", T::int_, "900000", at_least(1), I::high, nullptr, DynamicUpdate::read_only},
    {"transaction.abort.timed.out.transaction.cleanup.interval.ms", T::int_, "10000", at_least(1), I::low, nullptr,
     DynamicUpdate::read_only},
    {"transaction.remove.expired.transaction.cleanup.interval.ms", T::int_, "3600000", at_least(1), I::low, nullptr,
     DynamicUpdate::read_only},
    {"transaction.partition.verification.enable", T::boolean, "true", {}, I::low},
    // KRaft settings found in Kafka's sample server.properties; a single
    // Runnel node is its own controller, so they are read and not needed.
    {"process.roles", T::list, nullptr, one_of({"broker", "controller"}), I::high, nullptr, DynamicUpdate::read_only,
     kSingleController},
    {"controller.quorum.voters", T::list, nullptr, {}, I::high, nullptr, DynamicUpdate::read_only, kSingleController},
    {"controller.quorum.bootstrap.servers", T::list, nullptr, {}, I::high, nullptr, DynamicUpdate::read_only,
     kSingleController},
    {"controller.listener.names", T::list, nullptr, {}, I::high, nullptr, DynamicUpdate::read_only, kSingleController},
    {"cluster.id", T::string, nullptr, {}, I::low},
    // The cluster (issue 13): brokers register and the controller is elected
    // in etcd. Without runnel.etcd.endpoints the node is its own cluster.
    {"runnel.etcd.endpoints", T::list, nullptr, {}, I::high},
    {"runnel.etcd.prefix", T::string, "/runnel/", {}, I::medium},
    {"runnel.etcd.request.timeout.ms", T::int_, "5000", at_least(1), I::medium},
    {"broker.session.timeout.ms", T::int_, "9000", at_least(1), I::medium},
    {"broker.heartbeat.interval.ms", T::int_, "2000", at_least(1), I::medium},
    {"controlled.shutdown.enable", T::boolean, "true", {}, I::medium},
    {"auto.leader.rebalance.enable", T::boolean, "true", {}, I::high},
    {"leader.imbalance.check.interval.seconds", T::long_, "300", at_least(1), I::high},
    {"leader.imbalance.per.broker.percentage", T::int_, "10", range(0, 100), I::high},
    // Replication (issue 14): followers fetch from their leaders.
    {"num.replica.fetchers", T::int_, "1", at_least(1), I::high},
    {"replica.fetch.max.bytes", T::int_, "1048576", at_least(0), I::medium},
    {"replica.fetch.min.bytes", T::int_, "1", at_least(1), I::high},
    {"replica.fetch.wait.max.ms", T::int_, "500", at_least(0), I::medium},
    {"replica.fetch.response.max.bytes", T::int_, "10485760", at_least(0), I::medium},
    {"replica.fetch.backoff.ms", T::int_, "1000", at_least(0), I::medium},
    {"replica.lag.time.max.ms", T::long_, "30000", at_least(0), I::high},
    {"replica.socket.timeout.ms", T::int_, "30000", at_least(0), I::high},
    // Runnel's own: the one deliberate difference from Kafka's durability.
    // acks=all appends are fsynced before they are acknowledged (group commit
    // shares one fdatasync among concurrent producers). false = Kafka's way.
    {"runnel.acks.all.fsync", T::boolean, "true", {}, I::high},
    // A request frame must arrive whole within this long of its size
    // prefix, or the connection is closed (0: no deadline); Kafka has no
    // such limit, only connections.max.idle.ms (broker/connection.h).
    {"runnel.request.read.timeout.ms", T::long_, "60000", at_least(0), I::medium},
    // Runnel's HTTP admin listener (/metrics, /v1/status/live, /v1/status/ready);
    // unset: none.
    {"runnel.admin.listeners", T::list, nullptr, {kNoMin, kNoMax, {}, check_admin_listeners}, I::medium},
    // HTTP Basic on the admin listener against the users' SCRAM credentials
    // (broker/admin/admin_auth.h); REST Proxy's authentication.method.
    {"runnel.admin.authentication.method", T::string, "NONE", one_of({"NONE", "BASIC"}), I::medium},
    {"runnel.admin.authentication.skip.paths", T::list, "/v1/status/live,/v1/status/ready", {}, I::low},
    // REST Proxy's consumer.instance.timeout.ms: a REST consumer instance
    // unused this long is closed (broker/admin/rest/consumer_registry.h).
    {"runnel.rest.consumer.instance.timeout.ms", T::long_, "300000", at_least(1), I::low},
};

// Kafka's LogConfig / TopicConfig. Tiered-storage and replication-throttle
// configs are left out: Runnel does not implement them, so setting them is
// rejected rather than silently accepted. A default here is used only when
// no broker synonym applies.
const std::vector<ConfigKey> kTopicKeys = {
    {"cleanup.policy", T::list, "delete", one_of(kCleanupPolicies)},
    {"compression.type", T::string, "producer", one_of(kCompressionTypes)},
    {"compression.gzip.level", T::int_, "-1", range(-1, 9)},
    {"compression.lz4.level", T::int_, "9", range(1, 17)},
    {"compression.zstd.level", T::int_, "3", range(-131072, 22)},
    {"delete.retention.ms", T::long_, "86400000", at_least(0)},
    {"file.delete.delay.ms", T::long_, "60000", at_least(0)},
    {"flush.messages", T::long_, kLongMax, at_least(1)},
    {"flush.ms", T::long_, kLongMax, at_least(0)},
    {"index.interval.bytes", T::int_, "4096", at_least(0)},
    {"max.compaction.lag.ms", T::long_, kLongMax, at_least(1)},
    {"max.message.bytes", T::int_, "1048588", at_least(0)},
    {"message.timestamp.after.max.ms", T::long_, "3600000", at_least(0)},
    {"message.timestamp.before.max.ms", T::long_, kLongMax, at_least(0)},
    {"message.timestamp.type", T::string, "CreateTime", one_of(kTimestampTypes)},
    {"min.cleanable.dirty.ratio", T::double_, "0.5", range(0, 1)},
    {"min.compaction.lag.ms", T::long_, "0", at_least(0)},
    {"min.insync.replicas", T::int_, "1", at_least(1)},
    {"preallocate", T::boolean, "false"},
    {"retention.bytes", T::long_, "-1"},
    {"retention.ms", T::long_, "604800000", at_least(-1)},
    {"segment.bytes", T::int_, "1073741824", at_least(14)},
    {"segment.index.bytes", T::int_, "10485760", at_least(4)},
    {"segment.jitter.ms", T::long_, "0", at_least(0)},
    {"segment.ms", T::long_, "604800000", at_least(1)},
    {"unclean.leader.election.enable", T::boolean, "false"},
};

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 3'600'000;

// Kafka's ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS, for the topic
// configs above. One difference, kept from before this table: flush.ms has
// only log.flush.interval.ms (Kafka adds log.flush.scheduler.interval.ms).
const std::vector<TopicConfigSynonyms> kSynonyms = {
    {"segment.bytes", {{"log.segment.bytes"}}},
    {"segment.ms", {{"log.roll.ms"}, {"log.roll.hours", kHour}}},
    {"segment.jitter.ms", {{"log.roll.jitter.ms"}, {"log.roll.jitter.hours", kHour}}},
    {"segment.index.bytes", {{"log.index.size.max.bytes"}}},
    {"flush.messages", {{"log.flush.interval.messages"}}},
    {"flush.ms", {{"log.flush.interval.ms"}}},
    {"retention.bytes", {{"log.retention.bytes"}}},
    {"retention.ms", {{"log.retention.ms"}, {"log.retention.minutes", kMinute}, {"log.retention.hours", kHour}}},
    {"max.message.bytes", {{"message.max.bytes"}}},
    {"index.interval.bytes", {{"log.index.interval.bytes"}}},
    {"delete.retention.ms", {{"log.cleaner.delete.retention.ms"}}},
    {"min.compaction.lag.ms", {{"log.cleaner.min.compaction.lag.ms"}}},
    {"max.compaction.lag.ms", {{"log.cleaner.max.compaction.lag.ms"}}},
    {"file.delete.delay.ms", {{"log.segment.delete.delay.ms"}}},
    {"min.cleanable.dirty.ratio", {{"log.cleaner.min.cleanable.ratio"}}},
    {"cleanup.policy", {{"log.cleanup.policy"}}},
    {"unclean.leader.election.enable", {{"unclean.leader.election.enable"}}},
    {"min.insync.replicas", {{"min.insync.replicas"}}},
    {"compression.type", {{"compression.type"}}},
    {"compression.gzip.level", {{"compression.gzip.level"}}},
    {"compression.lz4.level", {{"compression.lz4.level"}}},
    {"compression.zstd.level", {{"compression.zstd.level"}}},
    {"preallocate", {{"log.preallocate"}}},
    {"message.timestamp.type", {{"log.message.timestamp.type"}}},
    {"message.timestamp.before.max.ms", {{"log.message.timestamp.before.max.ms"}}},
    {"message.timestamp.after.max.ms", {{"log.message.timestamp.after.max.ms"}}},
};

const ConfigKey* find_in(const std::vector<ConfigKey>& keys, std::string_view name) {
  for (const auto& k : keys)
    if (name == k.name) return &k;
  return nullptr;
}

template <typename N>
bool parse_number(std::string_view s, N& out) {
  auto t = trim(s);
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size() && !t.empty();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::span<const ConfigKey> broker_config_keys() { return kBrokerKeys; }
std::span<const ConfigKey> topic_config_keys() { return kTopicKeys; }
std::span<const TopicConfigSynonyms> topic_config_synonyms() { return kSynonyms; }

const ConfigKey* find_broker_key(std::string_view name) { return find_in(kBrokerKeys, name); }
const ConfigKey* find_topic_key(std::string_view name) { return find_in(kTopicKeys, name); }

std::span<const ConfigSynonym> broker_synonyms_of(std::string_view topic_key) {
  for (const auto& s : kSynonyms)
    if (topic_key == s.topic_key) return s.broker_keys;
  return {};
}

const TopicConfigSynonyms* topic_config_of_synonym(std::string_view broker_key) {
  for (const auto& s : kSynonyms)
    for (const auto& b : s.broker_keys)
      if (broker_key == b.name) return &s;
  return nullptr;
}

std::vector<std::string> broker_config_synonyms(std::string_view name) {
  // Kafka's special case: log.flush.scheduler.interval.ms is the default of
  // log.flush.interval.ms.
  if (name == "log.flush.interval.ms") return {std::string(name), "log.flush.scheduler.interval.ms"};
  if (const auto* family = topic_config_of_synonym(name); family && family->broker_keys.size() > 1) {
    std::vector<std::string> out;
    for (const auto& b : family->broker_keys) out.emplace_back(b.name);
    return out;
  }
  return {std::string(name)};
}

std::string trim(std::string_view s) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> parse_list(std::string_view value) {
  std::vector<std::string> out;
  while (true) {
    size_t comma = value.find(',');
    std::string item = trim(value.substr(0, comma));
    if (!item.empty()) out.push_back(std::move(item));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

bool parse_bool(std::string_view value) { return lower(trim(value)) == "true"; }

int64_t parse_integer(std::string_view value) {
  int64_t v = 0;
  parse_number(value, v);
  return v;
}

double parse_double(std::string_view value) {
  double v = 0;
  parse_number(value, v);
  return v;
}

std::string check_value(const ConfigKey& key, std::string_view value) {
  const Validator& val = key.validator;
  // Kafka's ConfigDef.Range: lower bound first, in the value's own type.
  auto range = [&](auto v) -> std::string {
    if (val.min != kNoMin && v < static_cast<decltype(v)>(val.min))
      return "Value must be at least " + std::to_string(val.min);
    if (val.max != kNoMax && v > static_cast<decltype(v)>(val.max))
      return "Value must be no more than " + std::to_string(val.max);
    return "";
  };
  std::string err;
  switch (key.type) {
    case T::boolean: {
      auto v = lower(trim(value));
      err = v == "true" || v == "false" ? "" : "Expected value to be either true or false";
      break;
    }
    case T::short_: {
      int16_t v;
      err = parse_number(value, v) ? range(v) : "Not a number of type SHORT";
      break;
    }
    case T::int_: {
      int32_t v;
      err = parse_number(value, v) ? range(v) : "Not a number of type INT";
      break;
    }
    case T::long_: {
      int64_t v;
      err = parse_number(value, v) ? range(v) : "Not a number of type LONG";
      break;
    }
    case T::double_: {
      double v;
      err = parse_number(value, v) ? range(v) : "Not a number of type DOUBLE";
      break;
    }
    case T::string:
      if (!val.valid_values.empty() &&
          std::find(val.valid_values.begin(), val.valid_values.end(), trim(value)) == val.valid_values.end())
        err = "String must be one of: " + join(val.valid_values);
      break;
    case T::list:
      if (!val.valid_values.empty())
        for (auto& item : parse_list(value))
          if (std::find(val.valid_values.begin(), val.valid_values.end(), item) == val.valid_values.end()) {
            err = "Invalid value " + item + " in list";
            break;
          }
      break;
    case T::class_:
    case T::password: break;
  }
  if (err.empty() && val.custom) err = val.custom(key.name, trim(value));
  return err;
}

std::string invalid_value_message(const ConfigKey& key, std::string_view value) {
  std::string err = check_value(key, value);
  if (err.empty()) return "";
  return "Invalid value " + std::string(value) + " for configuration " + key.name + ": " + err;
}

}  // namespace runnel::broker
