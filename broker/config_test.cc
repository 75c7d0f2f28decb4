#include <catch2/catch.hpp>

#include "broker/config.h"
#include "broker/security_config.h"
#include "broker/topic_config.h"

using namespace runnel::broker;

TEST_CASE("server.properties parses like Java properties", "[config]") {
  auto props = BrokerConfig::parse_properties(
      "# comment\n! also a comment\n  node.id = 3\nlisteners:PLAINTEXT://127.0.0.1:9092\n"
      "log.dirs=/a,\\\n    /b\nempty=\n");
  REQUIRE(props.at("node.id") == "3");
  REQUIRE(props.at("listeners") == "PLAINTEXT://127.0.0.1:9092");
  REQUIRE(props.at("log.dirs") == "/a,/b");
  REQUIRE(props.at("empty").empty());
}

TEST_CASE("Kafka's defaults apply and unknown keys are reported", "[config]") {
  auto c = BrokerConfig::from({{"node.id", "1"}, {"no.such.key", "x"}});
  REQUIRE(c.unknown_keys() == std::vector<std::string>{"no.such.key"});
  REQUIRE(c.get_int("num.partitions") == 1);
  REQUIRE(c.get_int("message.max.bytes") == 1048588);
  REQUIRE(c.get_int("socket.request.max.bytes") == 104857600);
  REQUIRE(c.get_long("connections.max.idle.ms") == 600000);
  REQUIRE(c.log_retention_ms() == 168LL * 3600 * 1000);
  REQUIRE(c.log_dirs() == std::vector<std::string>{"/tmp/kafka-logs"});
  REQUIRE(c.listeners().at(0).port == 9092);
  REQUIRE(c.get_bool("runnel.acks.all.fsync"));
}

TEST_CASE("retention: ms over minutes over hours", "[config]") {
  REQUIRE(BrokerConfig::from({{"node.id", "1"}, {"log.retention.minutes", "2"}}).log_retention_ms() == 120000);
  REQUIRE(BrokerConfig::from({{"node.id", "1"}, {"log.retention.minutes", "2"}, {"log.retention.ms", "5"}})
              .log_retention_ms() == 5);
  REQUIRE(BrokerConfig::from({{"node.id", "1"}, {"log.retention.hours", "-1"}}).log_retention_ms() == -1);
}

TEST_CASE("an invalid value stops startup naming the key", "[config]") {
  auto fails_with = [](std::map<std::string, std::string> p, const std::string& key) {
    p.emplace("node.id", "1");
    try {
      BrokerConfig::from(p);
    } catch (const ConfigError& e) {
      return std::string(e.what()).find(key) != std::string::npos;
    }
    return false;
  };
  REQUIRE(fails_with({{"num.partitions", "zero"}}, "num.partitions"));
  REQUIRE(fails_with({{"num.partitions", "0"}}, "num.partitions"));
  REQUIRE(fails_with({{"auto.create.topics.enable", "yes"}}, "auto.create.topics.enable"));
  REQUIRE(fails_with({{"listeners", "127.0.0.1:9092"}}, "listeners"));
  REQUIRE(fails_with({{"listeners", "PLAINTEXT://:99999"}}, "listeners"));
  REQUIRE(fails_with({{"log.message.timestamp.type", "Sometimes"}}, "log.message.timestamp.type"));
  REQUIRE_THROWS_AS(BrokerConfig::from({}), ConfigError);  // node.id is required
}

TEST_CASE("an empty log.dirs stops startup with Kafka's message", "[config]") {
  // It once reached Broker::Broker and crashed there on the missing first dir.
  for (auto props : std::vector<std::map<std::string, std::string>>{
           {{"log.dirs", ""}}, {{"log.dirs", " , "}}, {{"log.dir", ""}}}) {
    props.emplace("node.id", "1");
    REQUIRE_THROWS_WITH(BrokerConfig::from(props), "At least one log directory must be defined via log.dirs or log.dir.");
  }
  REQUIRE(BrokerConfig::from({{"node.id", "1"}, {"log.dirs", "/a, /b"}}).log_dirs() == std::vector<std::string>{"/a", "/b"});
}

TEST_CASE("topic configs take the broker's log.* values as defaults", "[config]") {
  auto broker = BrokerConfig::from({{"node.id", "1"}, {"log.retention.hours", "2"}, {"log.segment.bytes", "1048576"}});
  REQUIRE(topic_config_value(broker, {}, "retention.ms") == "7200000");
  REQUIRE(topic_config_value(broker, {}, "segment.bytes") == "1048576");
  REQUIRE(topic_config_value(broker, {{"retention.ms", "5"}}, "retention.ms") == "5");
  REQUIRE(topic_config_value(broker, {}, "cleanup.policy") == "delete");
  auto entries = describe_topic_configs(broker, {{"retention.ms", "5"}});
  auto it = std::find_if(entries.begin(), entries.end(), [](auto& e) { return e.name == "retention.ms"; });
  REQUIRE(it != entries.end());
  REQUIRE(it->source == ConfigSource::dynamic_topic_config);
  REQUIRE(it->synonyms.size() == 3);  // the override, log.retention.hours (set), log.retention.hours (default)
  REQUIRE(validate_topic_config("retention.ms", "abc").find("retention.ms") != std::string::npos);
  REQUIRE_FALSE(validate_topic_config("remote.storage.enable", "true").empty());
}

namespace {
// The ConfigError message BrokerConfig::from throws, or "" when it starts.
std::string startup_error(std::map<std::string, std::string> p) {
  p.emplace("node.id", "1");
  try {
    BrokerConfig::from(p);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
bool mentions(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }
}  // namespace

TEST_CASE("a listener or key asking for security Runnel lacks stops startup", "[config]") {
  // Kafka's default listener.security.protocol.map maps these names to
  // themselves, and its default sasl.enabled.mechanisms is GSSAPI (Kerberos).
  for (const char* l : {"SASL_PLAINTEXT://:9094", "SASL_SSL://:9095"}) {
    auto err = startup_error({{"listeners", std::string("PLAINTEXT://:9092,") + l}});
    INFO(err);
    REQUIRE(mentions(err, "GSSAPI"));
    REQUIRE(mentions(err, std::string(l).substr(0, std::string(l).find(':'))));
  }
  // Through a mapped listener name; each enabled mechanism needs its JAAS line.
  auto err = startup_error({{"listeners", "CLIENT://:9092"},
                            {"listener.security.protocol.map", "CLIENT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT"},
                            {"sasl.enabled.mechanisms", "PLAIN"}});
  REQUIRE(mentions(err, "listener.name.client.plain.sasl.jaas.config"));
  REQUIRE(mentions(startup_error({{"listeners", "CLIENT://:9092"},
                                  {"listener.security.protocol.map", "CLIENT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT"},
                                  {"listener.name.client.sasl.enabled.mechanisms", "SCRAM-SHA-1"}}),
                   "SCRAM-SHA-1"));
  // A listener name the map does not define is Kafka's startup error too.
  REQUIRE(mentions(startup_error({{"listeners", "CLIENT://:9092"}}), "no security protocol defined for listener CLIENT"));
  REQUIRE(mentions(startup_error({{"listener.security.protocol.map", "PLAINTEXT:TLS"}}), "listener.security.protocol.map"));

  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"sasl.server.callback.handler.class", "com.example.Handler"},
           {"listener.name.client.plain.sasl.server.callback.handler.class", "com.example.Handler"},
           {"sasl.kerberos.service.name", "kafka"},
           {"ssl.engine.factory.class", "com.example.Factory"},
           {"listener.name.ssl.ssl.engine.factory.class", "com.example.Factory"},
           {"principal.builder.class", "com.example.Builder"},
           {"authorizer.class.name", "com.example.MyAuthorizer"}}) {
    auto e = startup_error({{k, v}});
    INFO(k << " -> " << e);
    REQUIRE(mentions(e, k));
  }
  // The SASL keys Runnel serves are accepted on a PLAINTEXT-only broker too.
  REQUIRE(startup_error({{"sasl.enabled.mechanisms", "PLAIN"},
                         {"listener.name.client.plain.sasl.jaas.config", "x"},
                         {"connections.max.reauth.ms", "60000"}}) == "");
  // A cluster's brokers replicate over PLAINTEXT or SSL, on a listener they
  // advertise: named, through security.inter.broker.protocol, or the first.
  const std::map<std::string, std::string> cluster = {{"runnel.etcd.endpoints", "127.0.0.1:2379"},
                                                      {"listeners", "SSL://:9093,PLAINTEXT://:9092"}};
  REQUIRE(startup_error(cluster) == "");
  auto with = [&](std::map<std::string, std::string> more) {
    more.insert(cluster.begin(), cluster.end());
    return startup_error(more);
  };
  REQUIRE(with({{"inter.broker.listener.name", "PLAINTEXT"}}) == "");
  REQUIRE(with({{"security.inter.broker.protocol", "SSL"}}) == "");
  REQUIRE(mentions(with({{"inter.broker.listener.name", "INTERNAL"}}),
                   "the inter-broker listener INTERNAL is not among the advertised listeners"));
  auto c = BrokerConfig::from({{"node.id", "1"}, {"security.inter.broker.protocol", "SSL"}});
  REQUIRE(inter_broker_listener(c, "PLAINTEXT") == "SSL");
  REQUIRE(inter_broker_listener(BrokerConfig::from({{"node.id", "1"}}), "FIRST") == "FIRST");
  // What Kafka's defaults and PLAINTEXT ask for still starts.
  REQUIRE(startup_error({{"authorizer.class.name", ""}}) == "");
  // Kafka's own authorizers are Runnel's (security/authorizer/).
  REQUIRE(startup_error({{"authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"},
                         {"super.users", "User:admin"},
                         {"allow.everyone.if.no.acl.found", "true"}}) == "");
  REQUIRE(startup_error({{"authorizer.class.name", "kafka.security.authorizer.AclAuthorizer"}}) == "");
  REQUIRE(startup_error({{"security.inter.broker.protocol", "PLAINTEXT"}}) == "");
  REQUIRE(startup_error({{"listeners", "PLAINTEXT://:9092,CONTROLLER://:9093"}}) == "");
  REQUIRE(startup_error({{"listeners", "CLIENT://:9092"}, {"listener.security.protocol.map", "CLIENT:PLAINTEXT"}}) == "");
}

TEST_CASE("SSL listeners and their ssl.* keys, per listener too", "[config][ssl]") {
  REQUIRE(startup_error({{"listeners", "PLAINTEXT://:9092,SSL://:9093"}}) == "");
  REQUIRE(startup_error({{"listeners", "CLIENT://:9093"}, {"listener.security.protocol.map", "CLIENT:SSL"}}) == "");
  auto c = BrokerConfig::from({{"node.id", "1"},
                               {"listeners", "INTERNAL://:9092,EXTERNAL://:9093"},
                               {"listener.security.protocol.map", "INTERNAL:SSL,EXTERNAL:SSL"},
                               {"ssl.client.auth", "requested"},
                               {"ssl.keystore.type", "PEM"},
                               {"listener.name.external.ssl.client.auth", "required"}});
  REQUIRE(c.unknown_keys().empty());
  REQUIRE(listener_value(c, "EXTERNAL", "ssl.client.auth") == "required");
  REQUIRE(listener_value(c, "INTERNAL", "ssl.client.auth") == "requested");
  REQUIRE(listener_value(c, "EXTERNAL", "ssl.keystore.type") == "PEM");
  // Kafka's defaults.
  REQUIRE(listener_value(c, "INTERNAL", "ssl.enabled.protocols") == "TLSv1.2,TLSv1.3");
  REQUIRE(listener_value(c, "INTERNAL", "ssl.truststore.type") == "JKS");
  REQUIRE(listener_value(c, "INTERNAL", "ssl.principal.mapping.rules") == "DEFAULT");
  REQUIRE_FALSE(listener_value(c, "INTERNAL", "ssl.keystore.location").has_value());
  // A per-listener value is checked as the key it overrides.
  REQUIRE(mentions(startup_error({{"listener.name.external.ssl.client.auth", "always"}}), "ssl.client.auth"));
  REQUIRE(mentions(startup_error({{"ssl.client.auth", "sometimes"}}), "String must be one of"));
}

TEST_CASE("connections.max.idle.ms takes any long, as Kafka's does", "[config]") {
  // Negative means never expire (Kafka's Selector keeps no idle expiry).
  for (const char* v : {"-1", "0", "-9223372036854775808", "1"})
    REQUIRE(startup_error({{"connections.max.idle.ms", v}}) == "");
}

TEST_CASE("keys accepted but not acted on are reported when set", "[config]") {
  auto c = BrokerConfig::from({{"node.id", "1"}, {"num.network.threads", "8"}, {"process.roles", "broker,controller"},
                               {"num.partitions", "3"}});
  auto reported = c.accepted_not_acted_on();
  REQUIRE(reported.size() == 2);
  REQUIRE(reported[0].first == "num.network.threads");
  REQUIRE(reported[0].second == "one event-loop thread serves every connection");
  REQUIRE(reported[1].first == "process.roles");
  // Kafka's defaults are not reported, and each reported key is a declared one.
  REQUIRE(BrokerConfig::from({{"node.id", "1"}}).accepted_not_acted_on().empty());
  for (const auto& [k, why] : reported) REQUIRE(find_broker_key(k));
}

TEST_CASE("offsets.topic.replication.factor is reported as not acted on only on a single node", "[config]") {
  auto single = BrokerConfig::from({{"node.id", "1"}, {"offsets.topic.replication.factor", "3"}});
  auto reported = single.accepted_not_acted_on();
  REQUIRE(reported.size() == 1);
  REQUIRE(reported[0].first == "offsets.topic.replication.factor");
  auto cluster = BrokerConfig::from({{"node.id", "1"},
                                     {"offsets.topic.replication.factor", "3"},
                                     {"runnel.etcd.endpoints", "http://127.0.0.1:2379"}});
  REQUIRE(cluster.accepted_not_acted_on().empty());
}
