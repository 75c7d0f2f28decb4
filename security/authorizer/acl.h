// Kafka's ACL model (org.apache.kafka.common.acl and .resource): an
// AclBinding is a resource pattern (type, name, LITERAL or PREFIXED) and an
// access control entry (principal, host, operation, ALLOW or DENY). The
// enum values are Kafka's wire codes. A filter (DescribeAcls, DeleteAcls)
// has the same fields, where ANY / MATCH and absent strings are wildcards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace runnel::security {

// AclOperation.code().
enum class AclOperation : int8_t {
  unknown = 0,
  any = 1,
  all = 2,
  read = 3,
  write = 4,
  create = 5,
  delete_ = 6,
  alter = 7,
  describe = 8,
  cluster_action = 9,
  describe_configs = 10,
  alter_configs = 11,
  idempotent_write = 12,
  create_tokens = 13,
  describe_tokens = 14,
  two_phase_commit = 15,
};

// AclPermissionType.code().
enum class AclPermissionType : int8_t { unknown = 0, any = 1, deny = 2, allow = 3 };

// ResourceType.code().
enum class ResourceType : int8_t {
  unknown = 0,
  any = 1,
  topic = 2,
  group = 3,
  cluster = 4,
  transactional_id = 5,
  delegation_token = 6,
  user = 7,
};

// PatternType.code(): MATCH and ANY only in filters.
enum class PatternType : int8_t { unknown = 0, any = 1, match = 2, literal = 3, prefixed = 4 };

// A wire code Kafka does not know reads as UNKNOWN, as Kafka's fromCode.
AclOperation acl_operation(int8_t code);
AclPermissionType acl_permission_type(int8_t code);
ResourceType resource_type(int8_t code);
PatternType pattern_type(int8_t code);

// Kafka's enum names (AclOperation.DESCRIBE_CONFIGS.name(), ...), for the
// stored form and messages; parse_* read them back (nullopt if unknown).
const char* name(AclOperation v);
const char* name(AclPermissionType v);
const char* name(ResourceType v);
const char* name(PatternType v);
std::optional<AclOperation> parse_acl_operation(const std::string& s);
std::optional<AclPermissionType> parse_acl_permission_type(const std::string& s);
std::optional<ResourceType> parse_resource_type(const std::string& s);
std::optional<PatternType> parse_pattern_type(const std::string& s);

// ResourcePattern.WILDCARD_RESOURCE: a LITERAL "*" names every resource of its type.
inline constexpr const char* kWildcardResource = "*";
// AccessControlEntry's wildcards: the principal User:* and the host *.
inline constexpr const char* kWildcardPrincipal = "User:*";
inline constexpr const char* kWildcardHost = "*";
// The one CLUSTER resource's name (Kafka's CLUSTER_NAME).
inline constexpr const char* kClusterName = "kafka-cluster";

struct AclBinding {
  ResourceType resource_type = ResourceType::unknown;
  std::string resource_name;
  PatternType pattern_type = PatternType::literal;
  std::string principal;  // "User:alice", as KafkaPrincipal.toString()
  std::string host;
  AclOperation operation = AclOperation::unknown;
  AclPermissionType permission = AclPermissionType::unknown;

  auto operator<=>(const AclBinding&) const = default;
};

struct AclBindingFilter {
  ResourceType resource_type = ResourceType::any;
  std::optional<std::string> resource_name;  // nullopt: any name
  PatternType pattern_type = PatternType::any;
  std::optional<std::string> principal;
  std::optional<std::string> host;
  AclOperation operation = AclOperation::any;
  AclPermissionType permission = AclPermissionType::any;
};

// A filter from its wire fields (DescribeAcls, DeleteAcls).
AclBindingFilter filter_from_wire(int8_t resource_type, std::optional<std::string> resource_name, int8_t pattern_type,
                                  std::optional<std::string> principal, std::optional<std::string> host,
                                  int8_t operation, int8_t permission);

// Kafka's AclBindingFilter.matches: ResourcePatternFilter.matches (MATCH
// takes every pattern that would apply to the named resource: the same
// LITERAL name, the LITERAL "*", each PREFIXED prefix of the name) and
// AccessControlEntryFilter.matches.
bool matches(const AclBindingFilter& filter, const AclBinding& binding);

// Why a binding cannot be stored, as Kafka's AclControlManager.validateNewAcl
// and the broker's CreateAcls checks say it (INVALID_REQUEST); nullopt when valid.
std::optional<std::string> invalid_binding(const AclBinding& binding);
// Why a filter is refused (it has an UNKNOWN field, Kafka's
// AclBindingFilter.findIndefiniteField); nullopt when usable.
std::optional<std::string> invalid_filter(const AclBindingFilter& filter);

}  // namespace runnel::security
