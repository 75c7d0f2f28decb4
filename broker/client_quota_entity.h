// Kafka's client quotas as data (KIP-546): an entity names a user, a client
// id, both, or an IP address, each either by name or as that type's
// default entity; each entity carries quota values by key.
//
// Stored under metadata key "client_quotas" (etcd in a cluster,
// runnel-client-quotas.json on a single node), changed by AlterClientQuotas:
//   {"version":1,"entities":[{"entity":{"user":"alice","client-id":null},
//                             "quotas":{"producer_byte_rate":1048576}}, ...]}
// a null name being the default entity, as Kafka's QuotaRecord writes it.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace runnel::broker {

// Kafka's ClientQuotaEntity entity types.
inline constexpr const char* kUserEntity = "user";
inline constexpr const char* kClientIdEntity = "client-id";
inline constexpr const char* kIpEntity = "ip";

// Kafka's QuotaConfig keys.
inline constexpr const char* kProducerByteRate = "producer_byte_rate";
inline constexpr const char* kConsumerByteRate = "consumer_byte_rate";
inline constexpr const char* kRequestPercentage = "request_percentage";
inline constexpr const char* kControllerMutationRate = "controller_mutation_rate";
inline constexpr const char* kConnectionCreationRate = "connection_creation_rate";

// Entity type -> name; nullopt is the type's default entity.
using ClientQuotaEntity = std::map<std::string, std::optional<std::string>>;
// Quota key -> value.
using ClientQuotaValues = std::map<std::string, double>;
// Every entity with at least one quota.
using ClientQuotas = std::map<ClientQuotaEntity, ClientQuotaValues>;

// As Kafka's ClientQuotaEntity.toString: "ClientQuotaEntity(entries={user=alice, client-id=null})".
std::string to_string(const ClientQuotaEntity& entity);

std::string encode_client_quotas(const ClientQuotas& quotas);
// nullopt when the text is not a stored quota set (a damaged file or key).
std::optional<ClientQuotas> decode_client_quotas(const std::string& text);

}  // namespace runnel::broker
