#include "security/authorizer/standard_authorizer.h"

#include <algorithm>

namespace runnel::security {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool applies_to(const AclBinding& b, const std::string& name) {
  if (b.pattern_type == PatternType::literal) return b.resource_name == name || b.resource_name == kWildcardResource;
  return b.pattern_type == PatternType::prefixed && name.starts_with(b.resource_name);
}

bool for_whom(const AclBinding& b, const std::string& principal, const std::string& host) {
  return (b.principal == principal || b.principal == kWildcardPrincipal) &&
         (b.host == kWildcardHost || b.host == host);
}

// StandardAuthorizerData.findResult's operation rule.
bool covers(const AclBinding& b, AclOperation op) {
  if (b.operation == AclOperation::all || b.operation == op) return true;
  if (b.permission != AclPermissionType::allow) return false;
  switch (op) {
    case AclOperation::describe:
      return b.operation == AclOperation::read || b.operation == AclOperation::write ||
             b.operation == AclOperation::delete_ || b.operation == AclOperation::alter;
    case AclOperation::describe_configs: return b.operation == AclOperation::alter_configs;
    default: return false;
  }
}

}  // namespace

std::set<std::string> parse_super_users(const std::string& value) {
  std::set<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(';', start);
    if (end == std::string::npos) end = value.size();
    if (auto p = trim(value.substr(start, end - start)); !p.empty()) out.insert(p);
    start = end + 1;
  }
  return out;
}

void StandardAuthorizer::replace(const std::vector<AclBinding>& acls, int64_t revision) {
  if (revision < revision_) return;
  revision_ = revision;
  by_type_.clear();
  for (const auto& b : acls) by_type_[b.resource_type].insert(b);
}

std::vector<AclBinding> StandardAuthorizer::acls() const { return acls(AclBindingFilter{}); }

std::vector<AclBinding> StandardAuthorizer::acls(const AclBindingFilter& filter) const {
  std::vector<AclBinding> out;
  for (const auto& [type, bindings] : by_type_)
    for (const auto& b : bindings)
      if (matches(filter, b)) out.push_back(b);
  return out;
}

bool StandardAuthorizer::is_super_user(const KafkaPrincipal& principal) const {
  return options_.super_users.count(principal.to_string()) > 0;
}

bool StandardAuthorizer::authorize(const KafkaPrincipal& principal, const std::string& host, AclOperation op,
                                   ResourceType type, const std::string& name) const {
  if (is_super_user(principal)) return true;
  auto it = by_type_.find(type);
  if (it == by_type_.end()) return options_.allow_everyone_if_no_acl_found;
  const std::string who = principal.to_string();
  bool has_resource_acls = false, allowed = false;
  for (const auto& b : it->second) {
    if (!applies_to(b, name)) continue;
    has_resource_acls = true;
    if (!for_whom(b, who, host) || !covers(b, op)) continue;
    if (b.permission == AclPermissionType::deny) return false;
    allowed = true;
  }
  return allowed || (!has_resource_acls && options_.allow_everyone_if_no_acl_found);
}

bool StandardAuthorizer::authorize_by_resource_type(const KafkaPrincipal& principal, const std::string& host,
                                                    AclOperation op, ResourceType type) const {
  // As Kafka's default: a name no ACL is likely to name lets super users
  // (and allow.everyone.if.no.acl.found with no ACLs) through.
  if (authorize(principal, host, op, type, "hardcode")) return true;
  auto it = by_type_.find(type);
  if (it == by_type_.end()) return false;
  const std::string who = principal.to_string();
  std::vector<const AclBinding*> allows, denies;
  for (const auto& b : it->second) {
    if (!for_whom(b, who, host) || (b.operation != op && b.operation != AclOperation::all)) continue;
    (b.permission == AclPermissionType::deny ? denies : allows).push_back(&b);
  }
  auto denied = [&](const AclBinding& allow) {
    return std::any_of(denies.begin(), denies.end(), [&](const AclBinding* d) {
      if (d->pattern_type == PatternType::literal)
        return d->resource_name == kWildcardResource ||
               (allow.pattern_type == PatternType::literal && d->resource_name == allow.resource_name);
      return allow.resource_name.starts_with(d->resource_name);
    });
  };
  return std::any_of(allows.begin(), allows.end(), [&](const AclBinding* a) { return !denied(*a); });
}

}  // namespace runnel::security
