#include "security/authorizer/acl.h"

#include <array>
#include <utility>

namespace runnel::security {

namespace {

template <typename E, size_t N>
const char* lookup(const std::array<std::pair<E, const char*>, N>& table, E v) {
  for (const auto& [e, n] : table)
    if (e == v) return n;
  return "UNKNOWN";
}

template <typename E, size_t N>
std::optional<E> reverse(const std::array<std::pair<E, const char*>, N>& table, const std::string& s) {
  for (const auto& [e, n] : table)
    if (s == n) return e;
  return std::nullopt;
}

template <typename E>
E from_code(int8_t code, int8_t max) {
  return code < 0 || code > max ? E::unknown : static_cast<E>(code);
}

using O = AclOperation;
const std::array<std::pair<O, const char*>, 16> kOperations = {{
    {O::unknown, "UNKNOWN"},
    {O::any, "ANY"},
    {O::all, "ALL"},
    {O::read, "READ"},
    {O::write, "WRITE"},
    {O::create, "CREATE"},
    {O::delete_, "DELETE"},
    {O::alter, "ALTER"},
    {O::describe, "DESCRIBE"},
    {O::cluster_action, "CLUSTER_ACTION"},
    {O::describe_configs, "DESCRIBE_CONFIGS"},
    {O::alter_configs, "ALTER_CONFIGS"},
    {O::idempotent_write, "IDEMPOTENT_WRITE"},
    {O::create_tokens, "CREATE_TOKENS"},
    {O::describe_tokens, "DESCRIBE_TOKENS"},
    {O::two_phase_commit, "TWO_PHASE_COMMIT"},
}};

using P = AclPermissionType;
const std::array<std::pair<P, const char*>, 4> kPermissions = {{
    {P::unknown, "UNKNOWN"}, {P::any, "ANY"}, {P::deny, "DENY"}, {P::allow, "ALLOW"}}};

using R = ResourceType;
const std::array<std::pair<R, const char*>, 8> kResourceTypes = {{
    {R::unknown, "UNKNOWN"},
    {R::any, "ANY"},
    {R::topic, "TOPIC"},
    {R::group, "GROUP"},
    {R::cluster, "CLUSTER"},
    {R::transactional_id, "TRANSACTIONAL_ID"},
    {R::delegation_token, "DELEGATION_TOKEN"},
    {R::user, "USER"},
}};

using T = PatternType;
const std::array<std::pair<T, const char*>, 5> kPatternTypes = {{
    {T::unknown, "UNKNOWN"}, {T::any, "ANY"}, {T::match, "MATCH"}, {T::literal, "LITERAL"}, {T::prefixed, "PREFIXED"}}};

// ResourcePatternFilter.matches.
bool pattern_matches(const AclBindingFilter& f, const AclBinding& b) {
  if (f.resource_type != ResourceType::any && f.resource_type != b.resource_type) return false;
  if (f.pattern_type != PatternType::any && f.pattern_type != PatternType::match && f.pattern_type != b.pattern_type)
    return false;
  if (!f.resource_name) return true;
  const std::string& name = *f.resource_name;
  if (f.pattern_type == PatternType::any || f.pattern_type == b.pattern_type) return name == b.resource_name;
  // MATCH: every stored pattern that applies to the resource `name`.
  if (b.pattern_type == PatternType::literal) return name == b.resource_name || b.resource_name == kWildcardResource;
  if (b.pattern_type == PatternType::prefixed) return name.starts_with(b.resource_name);
  return false;
}

// AccessControlEntryFilter.matches.
bool entry_matches(const AclBindingFilter& f, const AclBinding& b) {
  if (f.principal && *f.principal != b.principal) return false;
  if (f.host && *f.host != b.host) return false;
  if (f.operation != AclOperation::any && f.operation != b.operation) return false;
  return f.permission == AclPermissionType::any || f.permission == b.permission;
}

}  // namespace

AclOperation acl_operation(int8_t code) { return from_code<AclOperation>(code, 15); }
AclPermissionType acl_permission_type(int8_t code) { return from_code<AclPermissionType>(code, 3); }
ResourceType resource_type(int8_t code) { return from_code<ResourceType>(code, 7); }
PatternType pattern_type(int8_t code) { return from_code<PatternType>(code, 4); }

const char* name(AclOperation v) { return lookup(kOperations, v); }
const char* name(AclPermissionType v) { return lookup(kPermissions, v); }
const char* name(ResourceType v) { return lookup(kResourceTypes, v); }
const char* name(PatternType v) { return lookup(kPatternTypes, v); }
std::optional<AclOperation> parse_acl_operation(const std::string& s) { return reverse(kOperations, s); }
std::optional<AclPermissionType> parse_acl_permission_type(const std::string& s) { return reverse(kPermissions, s); }
std::optional<ResourceType> parse_resource_type(const std::string& s) { return reverse(kResourceTypes, s); }
std::optional<PatternType> parse_pattern_type(const std::string& s) { return reverse(kPatternTypes, s); }

AclBindingFilter filter_from_wire(int8_t resource_type_code, std::optional<std::string> resource_name,
                                  int8_t pattern_type_code, std::optional<std::string> principal,
                                  std::optional<std::string> host, int8_t operation, int8_t permission) {
  return {resource_type(resource_type_code), std::move(resource_name), pattern_type(pattern_type_code),
          std::move(principal), std::move(host), acl_operation(operation), acl_permission_type(permission)};
}

bool matches(const AclBindingFilter& filter, const AclBinding& binding) {
  return pattern_matches(filter, binding) && entry_matches(filter, binding);
}

std::optional<std::string> invalid_binding(const AclBinding& b) {
  // The broker's own checks (Kafka's AclApis.handleCreateAcls) come first.
  if (b.resource_type == ResourceType::cluster && b.resource_name != kClusterName)
    return std::string("The only valid name for the CLUSTER resource is ") + kClusterName;
  if (b.resource_name.empty()) return "Invalid empty resource name";
  // Then the controller's (AclControlManager.validateNewAcl).
  if (b.resource_type == ResourceType::unknown || b.resource_type == ResourceType::any)
    return std::string("Invalid resourceType ") + name(b.resource_type);
  if (b.pattern_type != PatternType::literal && b.pattern_type != PatternType::prefixed)
    return std::string("Invalid patternType ") + name(b.pattern_type);
  if (b.operation == AclOperation::unknown || b.operation == AclOperation::any)
    return std::string("Invalid operation ") + name(b.operation);
  if (b.permission != AclPermissionType::allow && b.permission != AclPermissionType::deny)
    return std::string("Invalid permissionType ") + name(b.permission);
  if (b.principal.find(':') == std::string::npos)
    return "Could not parse principal from `" + b.principal +
           "` (no colon is present separating the principal type from the principal name)";
  return std::nullopt;
}

std::optional<std::string> invalid_filter(const AclBindingFilter& f) {
  if (f.resource_type == ResourceType::unknown || f.pattern_type == PatternType::unknown)
    return "Unknown patternFilter.";
  if (f.operation == AclOperation::unknown || f.permission == AclPermissionType::unknown)
    return "Unknown entryFilter.";
  return std::nullopt;
}

}  // namespace runnel::security
