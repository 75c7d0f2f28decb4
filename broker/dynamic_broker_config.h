// Kafka's dynamic broker configs (KIP-226) as far as Runnel applies them:
// the broker-level defaults of topic configs (log.retention.ms,
// log.segment.bytes, compression.type, message.max.bytes, ...), set at
// runtime with AlterConfigs / IncrementalAlterConfigs on BROKER "<node id>"
// or on BROKER "" (the cluster-wide default), over server.properties.
//
// Kafka keeps them in its metadata log; Runnel keeps them in the metadata
// store (keys configs/broker/<id> and configs/broker/<default>; on one node
// runnel-broker-configs.json in the first log dir), so they survive
// restarts as Kafka's do. A listener's key and trust stores are dynamic too
// (listener.name.<l>.ssl.keystore.location and friends, on BROKER "<id>"
// only): the broker's ListenerChannels validates and applies them. Kafka's
// other dynamic keys (thread pools, listener lists, quotas) are refused here
// as not dynamically updatable: Runnel cannot apply them at runtime (README,
// deliberate differences).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <system_error>

#include "broker/config.h"
#include "broker/topic_table.h"

namespace runnel::broker {

using DynamicConfigs = std::map<std::string, std::string>;

// Kafka's DynamicLogConfig.ReconfigurableConfigs: the first (highest
// precedence) broker synonym of each topic config, e.g. log.retention.ms
// but not log.retention.hours (the keys config_def.cc marks dynamic).
bool is_dynamic_broker_config(const std::string& name);

// The checks Kafka's DynamicBrokerConfig.validateConfigs makes on a layer's
// complete new set: every key dynamic, a listener's TLS stores only through
// the listener prefix and only on the broker's own layer, every value
// valid for its type.
TopicError check_dynamic_configs(const DynamicConfigs& configs, ConfigLayer layer);

// Takes both dynamic layers as stored (each a JSON object of strings;
// nullopt when never set); an entry that is no longer valid is dropped
// with a warning, never a failed startup.
void load_dynamic_configs(BrokerConfig& config, const std::optional<std::string>& broker_layer,
                          const std::optional<std::string>& default_layer);
// A layer as it is stored.
std::string dynamic_configs_value(const BrokerConfig& config, ConfigLayer layer);

}  // namespace runnel::broker
