// Every key of the cluster's metadata, one comment each. Keys are relative
// to the cluster: the etcd store prefixes them with root(cluster id); the
// local store keeps the same keys in today's files in the first log dir
// (local_metadata_store.h says which key lives in which file). Values are
// JSON text unless said otherwise.
#pragma once

#include <string>

#include "base/ids.h"

namespace runnel::cluster::keys {

// The etcd prefix of one cluster's keys, so clusters can share an etcd.
inline std::string root(const std::string& cluster_id) { return "/runnel/" + cluster_id + "/"; }

// The cluster's id (Kafka's cluster.id, as meta.properties carries it), as
// plain text: written by the first broker to start, if absent; every
// other broker adopts it. In etcd only (a single node's is its meta.properties').
inline constexpr const char* kClusterId = "cluster_id";

// One topic: {"name","id" (base64 topic id),"partitions" (count),"configs" (overrides),
// "assignment" (in a cluster: each partition's replicas, metadata_codec.h)}.
// Its create revision names this incarnation of the topic: every partition
// change is conditioned on it (topic_writes.h).
// Local: one element of runnel-topics.json's "topics".
inline constexpr const char* kTopicsPrefix = "topics/";
inline std::string topic(const std::string& name) { return kTopicsPrefix + name; }

// One partition's replicas, ISR, leader and epochs (metadata_codec.h):
// {"replicas":[ids],"isr":[ids],"leader":id,"leader_epoch":n,"partition_epoch":n},
// and while a reassignment runs "adding_replicas":[ids],"removing_replicas":[ids]
// (absent otherwise, and in values written before reassignments existed).
// Written at the partition's first change and every one after: the
// controller's elections, the leader's ISR changes (Kafka's AlterPartition,
// which also completes a reassignment in the same write), and
// AlterPartitionReassignments starting or cancelling one from any broker;
// each by compare-and-swap on this key (absent: the partition is still as
// its topic's assignment created it, the first replica leading at epoch 0).
// Absent for a single node's topics: there every partition has one
// replica, this node, which leads at epoch 0.
inline constexpr const char* kPartitionsPrefix = "partitions/";
inline std::string partitions_of(const std::string& topic) { return kPartitionsPrefix + topic + "/"; }
inline std::string partition(const std::string& topic, int32_t index) {
  return partitions_of(topic) + std::to_string(index);
}

// One broker's dynamic configs (AlterConfigs on BROKER "<id>"): {name: value}.
// Local: runnel-broker-configs.json's "broker" member.
inline constexpr const char* kBrokerConfigsPrefix = "configs/broker/";
inline std::string broker_config(NodeId id) { return kBrokerConfigsPrefix + std::to_string(id.value()); }
// The cluster-wide default (BROKER ""), under Kafka's ZooKeeper name
// /config/brokers/<default>. Local: runnel-broker-configs.json's "cluster_default".
inline std::string cluster_default_config() { return std::string(kBrokerConfigsPrefix) + "<default>"; }

// The end (exclusive) of the last producer-id block claimed, as decimal
// text; claimed by compare-and-swap (producer_id_allocator.h).
// Local: runnel-producer-ids.
inline constexpr const char* kProducerIds = "producer_ids";

// Every ACL binding of the cluster's authorizer (CreateAcls, DeleteAcls),
// as one value: {"version":1,"acls":[...]} (security/authorizer/acl_codec.h).
// Changed by compare-and-swap from any broker; every broker watches it and
// applies each new value, so an ACL is effective cluster-wide.
// Local: runnel-acls.json.
inline constexpr const char* kAcls = "acls";

// Every SCRAM credential of the cluster's users (AlterUserScramCredentials),
// as one value: {"version":1,"users":{"alice":{"SCRAM-SHA-256":"salt=...,
// stored_key=...,server_key=...,iterations=8192"}}} (Kafka's credential
// string form, broker/scram_credentials_codec.h; never a password).
// Changed by compare-and-swap from any broker and watched by every broker,
// as kAcls is, so a user can authenticate through any broker at once.
// Local: runnel-scram-credentials.json.
inline constexpr const char* kScramCredentials = "scram_credentials";

// Every client quota (AlterClientQuotas: user, client-id and ip entities
// and their quota values), as one value: {"version":1,"entities":[...]}
// (broker/client_quota_entity.h). Changed by compare-and-swap and watched
// by every broker, as kAcls is, so a quota set through one broker holds on all.
// Local: runnel-client-quotas.json.
inline constexpr const char* kClientQuotas = "client_quotas";

// A live broker's registration (metadata_codec.h: endpoints, rack), bound to
// its session lease (broker_registry.h); the key's create revision is its broker epoch.
inline constexpr const char* kBrokersPrefix = "brokers/";
inline std::string broker(NodeId id) { return kBrokersPrefix + std::to_string(id.value()); }

// The elected controller's node id, bound to its registration lease
// (controller_election.h); the key's create revision fences its writes.
inline constexpr const char* kController = "controller";

}  // namespace runnel::cluster::keys
