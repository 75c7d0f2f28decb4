// The config table itself, against Kafka's: every topic config's broker
// synonyms (ServerTopicConfigSynonyms), the defaults, the validators, the
// order synonyms are resolved in, and the typed configs built from it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "broker/config_def.h"
#include "broker/dynamic_broker_config.h"
#include "broker/topic_config.h"
#include "broker/testing/hosted_topics.h"
#include "broker/topic_table.h"
#include "security/ssl_factory.h"
#include "storage/test_util.h"

using namespace runnel::broker;
namespace storage = runnel::storage;

namespace {

BrokerConfig broker_with(std::map<std::string, std::string> props = {}) {
  props.emplace("node.id", "1");
  return BrokerConfig::from(props);
}

std::vector<std::string> names_of(std::span<const ConfigSynonym> synonyms) {
  std::vector<std::string> out;
  for (const auto& s : synonyms) out.emplace_back(s.name);
  return out;
}

}  // namespace

TEST_CASE("every topic config has Kafka's broker synonyms, in Kafka's order", "[config_def]") {
  using V = std::vector<std::string>;
  // Kafka's ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS (KIP-390
  // adds the compression levels under their own names). flush.ms lacks
  // Kafka's second synonym, log.flush.scheduler.interval.ms, as before.
  const std::map<std::string, V> kafka = {
      {"segment.bytes", {"log.segment.bytes"}},
      {"segment.ms", {"log.roll.ms", "log.roll.hours"}},
      {"segment.jitter.ms", {"log.roll.jitter.ms", "log.roll.jitter.hours"}},
      {"segment.index.bytes", {"log.index.size.max.bytes"}},
      {"flush.messages", {"log.flush.interval.messages"}},
      {"flush.ms", {"log.flush.interval.ms"}},
      {"retention.bytes", {"log.retention.bytes"}},
      {"retention.ms", {"log.retention.ms", "log.retention.minutes", "log.retention.hours"}},
      {"max.message.bytes", {"message.max.bytes"}},
      {"index.interval.bytes", {"log.index.interval.bytes"}},
      {"delete.retention.ms", {"log.cleaner.delete.retention.ms"}},
      {"min.compaction.lag.ms", {"log.cleaner.min.compaction.lag.ms"}},
      {"max.compaction.lag.ms", {"log.cleaner.max.compaction.lag.ms"}},
      {"file.delete.delay.ms", {"log.segment.delete.delay.ms"}},
      {"min.cleanable.dirty.ratio", {"log.cleaner.min.cleanable.ratio"}},
      {"cleanup.policy", {"log.cleanup.policy"}},
      {"unclean.leader.election.enable", {"unclean.leader.election.enable"}},
      {"min.insync.replicas", {"min.insync.replicas"}},
      {"compression.type", {"compression.type"}},
      {"compression.gzip.level", {"compression.gzip.level"}},
      {"compression.lz4.level", {"compression.lz4.level"}},
      {"compression.zstd.level", {"compression.zstd.level"}},
      {"preallocate", {"log.preallocate"}},
      {"message.timestamp.type", {"log.message.timestamp.type"}},
      {"message.timestamp.before.max.ms", {"log.message.timestamp.before.max.ms"}},
      {"message.timestamp.after.max.ms", {"log.message.timestamp.after.max.ms"}},
  };
  for (const auto& key : topic_config_keys()) {
    INFO(key.name);
    REQUIRE(kafka.count(key.name));
    REQUIRE(names_of(broker_synonyms_of(key.name)) == kafka.at(key.name));
  }
  REQUIRE(topic_config_synonyms().size() == kafka.size());
  for (const auto& family : topic_config_synonyms()) REQUIRE(find_topic_key(family.topic_key));
  // The converters: only the hours and minutes synonyms of ms configs.
  for (const auto& family : topic_config_synonyms())
    for (const auto& s : family.broker_keys) {
      const std::string n = s.name;
      INFO(n);
      REQUIRE(s.ms_per_unit == (n.ends_with(".hours") ? 3'600'000 : n.ends_with(".minutes") ? 60'000 : 1));
    }
}

TEST_CASE("each broker synonym is a declared broker key whose every valid value the topic key accepts", "[config_def]") {
  // What once needed a probe of storage: a broker default that passes its
  // own validator can always be applied to the topic config it feeds.
  for (const auto& family : topic_config_synonyms()) {
    const ConfigKey* topic = find_topic_key(family.topic_key);
    for (const auto& s : family.broker_keys) {
      INFO(family.topic_key << " <- " << s.name);
      const ConfigKey* broker = find_broker_key(s.name);
      REQUIRE(broker);
      REQUIRE(broker->validator.valid_values == topic->validator.valid_values);
      if (s.ms_per_unit != 1) continue;  // converted, and checked below through the build
      REQUIRE(broker->type == topic->type);
      REQUIRE(broker->validator.min >= topic->validator.min);
      REQUIRE(broker->validator.max <= topic->validator.max);
      if (broker->default_value) REQUIRE(check_value(*topic, broker->default_value) == "");
    }
  }
  // The converted ones at their broker bounds still make a valid topic config.
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{{"log.roll.hours", "1"},
                                                                      {"log.roll.hours", "2147483647"},
                                                                      {"log.roll.jitter.hours", "0"},
                                                                      {"log.retention.hours", "-1"},
                                                                      {"log.retention.minutes", "-1"},
                                                                      {"log.retention.minutes", "2147483647"}}) {
    INFO(k << "=" << v);
    REQUIRE_NOTHROW(TopicConfig::build(broker_with({{k, v}}), {}));
  }
}

TEST_CASE("defaults are Kafka's, and storage's own defaults agree with the table", "[config_def]") {
  const auto c = TopicConfig::build(broker_with(), {});
  // storage::LogConfig{} is what storage tests and tools open logs with.
  REQUIRE(c.log == storage::LogConfig{});
  REQUIRE(c.log.segment_bytes == 1073741824);
  REQUIRE(c.log.segment_ms == 604800000);
  REQUIRE(c.log.segment_jitter_ms == 0);
  REQUIRE(c.log.segment_index_bytes == 10485760);
  REQUIRE(c.log.index_interval_bytes == 4096);
  REQUIRE(c.log.retention_ms == 604800000);
  REQUIRE(c.log.retention_bytes == -1);
  REQUIRE(c.log.flush_messages == INT64_MAX);
  REQUIRE(c.log.flush_ms == INT64_MAX);
  REQUIRE(c.log.file_delete_delay_ms == 60000);
  REQUIRE(c.log.message_timestamp_type == storage::TimestampType::create_time);
  REQUIRE(c.log.cleanup_delete);
  REQUIRE_FALSE(c.log.cleanup_compact);
  REQUIRE_FALSE(c.log.preallocate);
  REQUIRE(c.log.delete_retention_ms == 86400000);
  REQUIRE(c.log.min_cleanable_dirty_ratio == 0.5);
  REQUIRE(c.log.min_compaction_lag_ms == 0);
  REQUIRE(c.log.max_compaction_lag_ms == INT64_MAX);
  REQUIRE(c.max_message_bytes == 1048588);
  REQUIRE(c.min_insync_replicas == 1);
  REQUIRE(c.message_timestamp_before_max_ms == INT64_MAX);
  REQUIRE(c.message_timestamp_after_max_ms == 3600000);
  REQUIRE(c.compression_type == "producer");
  REQUIRE(c.compression_gzip_level == -1);
  REQUIRE(c.compression_lz4_level == 9);
  REQUIRE(c.compression_zstd_level == 3);
  REQUIRE_FALSE(c.unclean_leader_election_enable);

  // A sample of KafkaConfig's defaults.
  const std::map<std::string, std::optional<std::string>> kafka = {
      {"num.partitions", "1"},           {"default.replication.factor", "1"},
      {"message.max.bytes", "1048588"},  {"log.retention.hours", "168"},
      {"log.retention.ms", std::nullopt}, {"log.roll.hours", "168"},
      {"log.segment.bytes", "1073741824"}, {"socket.request.max.bytes", "104857600"},
      {"offsets.topic.num.partitions", "50"}, {"group.max.session.timeout.ms", "1800000"},
      {"log.cleaner.min.cleanable.ratio", "0.5"}, {"log.dir", "/tmp/kafka-logs"},
      {"listeners", "PLAINTEXT://:9092"}, {"compression.type", "producer"},
  };
  for (const auto& [k, v] : kafka) {
    INFO(k);
    const ConfigKey* key = find_broker_key(k);
    REQUIRE(key);
    REQUIRE((key->default_value ? std::optional<std::string>(key->default_value) : std::nullopt) == v);
  }
  // Every default a key declares passes its own validator.
  for (auto keys : {broker_config_keys(), topic_config_keys()})
    for (const auto& key : keys) {
      INFO(key.name);
      if (key.default_value) REQUIRE(check_value(key, key.default_value) == "");
    }
}

TEST_CASE("no key is declared twice, and the keys not acted on are explained", "[config_def]") {
  for (auto keys : {broker_config_keys(), topic_config_keys()}) {
    std::set<std::string> seen;
    for (const auto& key : keys) REQUIRE(seen.insert(key.name).second);
  }
  size_t not_acted_on = 0;
  for (const auto& key : broker_config_keys())
    if (key.not_acted_on) {
      ++not_acted_on;
      REQUIRE(std::string(key.not_acted_on).size() > 10);
      REQUIRE(key.update == DynamicUpdate::read_only);
    }
  REQUIRE(not_acted_on == 21);  // 6 of them ssl.* keys OpenSSL has no use for (config_def.cc)
  auto c = broker_with({{"transaction.state.log.replication.factor", "1"}, {"log.cleaner.threads", "2"}});
  auto reported = c.accepted_not_acted_on();
  REQUIRE(reported.size() == 2);
  REQUIRE(reported[0] == std::pair<std::string, std::string>{"log.cleaner.threads",
                                                             "the cleaner runs in the periodic background log work"});
  REQUIRE(reported[1].first == "transaction.state.log.replication.factor");
}

TEST_CASE("a double is validated as a double, out of range rejected with Kafka's message", "[config_def]") {
  const ConfigKey& ratio = *find_topic_key("min.cleanable.dirty.ratio");
  const ConfigKey& broker_ratio = *find_broker_key("log.cleaner.min.cleanable.ratio");
  for (const ConfigKey* key : {&ratio, &broker_ratio}) {
    INFO(key->name);
    REQUIRE(check_value(*key, "1.0000001") == "Value must be no more than 1");
    REQUIRE(check_value(*key, "-0.0001") == "Value must be at least 0");
    REQUIRE(check_value(*key, "inf") == "Value must be no more than 1");
    REQUIRE(check_value(*key, "0.75 ") == "");
    REQUIRE(check_value(*key, "1") == "");
    REQUIRE(check_value(*key, "x") == "Not a number of type DOUBLE");
  }
  REQUIRE(invalid_value_message(ratio, "2") ==
          "Invalid value 2 for configuration min.cleanable.dirty.ratio: Value must be no more than 1");
  REQUIRE(TopicConfig::build(broker_with({{"log.cleaner.min.cleanable.ratio", "0.25"}}), {}).log.min_cleanable_dirty_ratio ==
          0.25);
  REQUIRE_THROWS_AS(TopicConfig::build(broker_with(), {{"min.cleanable.dirty.ratio", "1.5"}}), std::logic_error);
  REQUIRE_THROWS_WITH(broker_with({{"log.cleaner.min.cleanable.ratio", "-1"}}),
                      "Invalid value -1 for configuration log.cleaner.min.cleanable.ratio: Value must be at least 0");
}

TEST_CASE("synonyms resolve in Kafka's order: override, then each synonym by precedence, each by layer", "[config_def]") {
  auto retention = [](std::map<std::string, std::string> props) {
    return TopicConfig::build(broker_with(std::move(props)), {}).log.retention_ms;
  };
  REQUIRE(retention({}) == 168LL * 3'600'000);
  REQUIRE(retention({{"log.retention.hours", "2"}}) == 7'200'000);
  REQUIRE(retention({{"log.retention.hours", "2"}, {"log.retention.minutes", "3"}}) == 180'000);
  REQUIRE(retention({{"log.retention.hours", "2"}, {"log.retention.minutes", "3"}, {"log.retention.ms", "7"}}) == 7);
  REQUIRE(retention({{"log.retention.minutes", "-1"}}) == -1);
  auto segment_ms = [](std::map<std::string, std::string> props) {
    return TopicConfig::build(broker_with(std::move(props)), {}).log.segment_ms;
  };
  REQUIRE(segment_ms({{"log.roll.hours", "1"}}) == 3'600'000);
  REQUIRE(segment_ms({{"log.roll.hours", "1"}, {"log.roll.ms", "5000"}}) == 5000);

  // Layers: a dynamic log.retention.ms beats a static one, and the topic's
  // own override beats both.
  auto broker = broker_with({{"log.retention.ms", "1000"}});
  broker.set_dynamic_configs(ConfigLayer::dynamic_default, {{"log.retention.ms", "2000"}});
  REQUIRE(TopicConfig::build(broker, {}).log.retention_ms == 2000);
  broker.set_dynamic_configs(ConfigLayer::dynamic_broker, {{"log.retention.ms", "3000"}});
  REQUIRE(TopicConfig::build(broker, {}).log.retention_ms == 3000);
  REQUIRE(TopicConfig::build(broker, {{"retention.ms", "4000"}}).log.retention_ms == 4000);

  // Kafka's DynamicBrokerConfig.brokerConfigSynonyms.
  using V = std::vector<std::string>;
  REQUIRE(broker_config_synonyms("log.retention.hours") ==
          V{"log.retention.ms", "log.retention.minutes", "log.retention.hours"});
  REQUIRE(broker_config_synonyms("log.roll.ms") == V{"log.roll.ms", "log.roll.hours"});
  REQUIRE(broker_config_synonyms("log.roll.jitter.hours") == V{"log.roll.jitter.ms", "log.roll.jitter.hours"});
  REQUIRE(broker_config_synonyms("log.flush.interval.ms") == V{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"});
  REQUIRE(broker_config_synonyms("log.segment.bytes") == V{"log.segment.bytes"});
  REQUIRE(broker_config_synonyms("num.io.threads") == V{"num.io.threads"});
}

TEST_CASE("dynamic broker keys are the topic defaults and the listeners' TLS stores", "[config_def]") {
  // Kafka's DynamicLogConfig.ReconfigurableConfigs: the first synonym of each topic config.
  std::set<std::string> first;
  for (const auto& family : topic_config_synonyms()) first.insert(family.broker_keys.front().name);
  std::set<std::string> cluster_wide, per_listener;
  for (const auto& key : broker_config_keys()) {
    if (key.update == DynamicUpdate::cluster_wide) cluster_wide.insert(key.name);
    if (key.update == DynamicUpdate::per_listener) per_listener.insert(key.name);
  }
  // And Kafka's DynamicConnectionQuota.ReconfigurableConfigs.
  std::set<std::string> expected = first;
  expected.insert({"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
                   "max.connection.creation.rate"});
  REQUIRE(cluster_wide == expected);
  for (const auto& name : expected) REQUIRE(is_dynamic_broker_config(name));
  // Kafka's SslConfigs.RECONFIGURABLE_CONFIGS, dynamic only with a listener prefix.
  const auto& reconfigurable = runnel::security::reconfigurable_ssl_configs();
  REQUIRE(per_listener == std::set<std::string>(reconfigurable.begin(), reconfigurable.end()));
  REQUIRE(is_dynamic_broker_config("listener.name.ssl.ssl.keystore.location"));
  REQUIRE_FALSE(is_dynamic_broker_config("listener.name.ssl.ssl.enabled.protocols"));
  REQUIRE_FALSE(is_dynamic_broker_config("listener.name.ssl.ssl.keystore"));
}

TEST_CASE("a listener's TLS stores are dynamic on this broker's layer only and with the listener prefix",
          "[config_def]") {
  const std::string key = "listener.name.external.ssl.keystore.location";
  REQUIRE(check_dynamic_configs({{key, "/etc/kafka/new.pem"}}, ConfigLayer::dynamic_broker).ok());
  auto e = check_dynamic_configs({{"ssl.keystore.location", "/etc/kafka/new.pem"}}, ConfigLayer::dynamic_broker);
  REQUIRE(e.code == runnel::protocol::ErrorCode::invalid_request);
  REQUIRE(e.message ==
          "These security configs can be dynamically updated only per-listener using the listener prefix: "
          "Set(ssl.keystore.location)");
  e = check_dynamic_configs({{key, "/etc/kafka/new.pem"}}, ConfigLayer::dynamic_default);
  REQUIRE(e.code == runnel::protocol::ErrorCode::invalid_request);
  REQUIRE(e.message == "Cannot update these configs at default cluster level, broker id must be specified: Set(" + key + ")");
  e = check_dynamic_configs({{"listener.name.external.ssl.client.auth", "required"}}, ConfigLayer::dynamic_broker);
  REQUIRE(e.message == "Cannot update these configs dynamically: Set(listener.name.external.ssl.client.auth)");
}

TEST_CASE("typed topic configs follow override changes and the broker's dynamic defaults", "[config_def]") {
  storage::testing::TempDir dir;
  auto config = broker_with({{"log.dirs", dir.path.string()}});
  std::string record;
  {
    runnel::broker::testing::HostedTopics node(config, true);
    TopicTable& table = node.topics;
    auto topic = node.create("typed", 2, {{"max.message.bytes", "2048"}, {"message.timestamp.type", " LogAppendTime"}});
    REQUIRE(topic->config.max_message_bytes == 2048);
    REQUIRE(topic->config.log.message_timestamp_type == storage::TimestampType::log_append_time);
    REQUIRE(node.partition("typed", 1)->log().config().message_timestamp_type == storage::TimestampType::log_append_time);
    REQUIRE(topic->config.min_insync_replicas == 1);

    config.set_dynamic_configs(ConfigLayer::dynamic_default, {{"min.insync.replicas", "2"}, {"log.segment.bytes", "1048576"}});
    REQUIRE(topic->config.min_insync_replicas == 1);  // built once, until rebuilt
    table.apply_broker_defaults();
    REQUIRE(topic->config.min_insync_replicas == 2);
    REQUIRE(topic->config.log.segment_bytes == 1048576);
    for (const auto& p : node.replicas.partitions("typed")) REQUIRE(p->log().config().segment_bytes == 1048576);
    REQUIRE(topic->config.max_message_bytes == 2048);  // the override still wins
    record = TopicTable::record(*topic);
  }
  // Loaded again from its record in the metadata store, the overrides build the same config.
  runnel::broker::testing::HostedTopics reloaded(config, true);
  REQUIRE(reloaded.load({runnel::cluster::KeyValue{"topics/typed", record, 1, 1, runnel::cluster::kNoLease}}).empty());
  auto topic = reloaded.topics.find("typed");
  REQUIRE(topic);
  REQUIRE(topic->config.max_message_bytes == 2048);
  REQUIRE(topic->config.min_insync_replicas == 2);
  REQUIRE(reloaded.partition("typed", 0)->log().config().segment_bytes == 1048576);
  REQUIRE(reloaded.partition("typed", 0)->log().config().message_timestamp_type == storage::TimestampType::log_append_time);
}

TEST_CASE("the typed broker config is built at startup and rebuilt when a layer changes", "[config_def]") {
  auto c = broker_with({{"num.partitions", "3"}, {"broker.rack", "r1"}, {"runnel.acks.all.fsync", "FALSE"}});
  REQUIRE(c.typed().num_partitions == 3);
  REQUIRE(c.typed().broker_rack == "r1");
  REQUIRE_FALSE(c.typed().acks_all_fsync);
  REQUIRE(c.typed().auto_create_topics_enable);
  REQUIRE(c.typed().delete_topic_enable);
  REQUIRE(c.typed().default_replication_factor == 1);
  REQUIRE(c.typed().fetch_max_bytes == 57671680);
  REQUIRE(broker_with().typed() == TypedBrokerConfig{});  // the struct's defaults are the table's
  c.set_dynamic_configs(ConfigLayer::dynamic_default, {{"num.partitions", "5"}});
  REQUIRE(c.typed().num_partitions == 5);
  c.set_dynamic_configs(ConfigLayer::dynamic_broker, {{"num.partitions", "7"}});
  REQUIRE(c.typed().num_partitions == 7);
  c.set_dynamic_configs(ConfigLayer::dynamic_broker, {});
  REQUIRE(c.typed().num_partitions == 5);
}
