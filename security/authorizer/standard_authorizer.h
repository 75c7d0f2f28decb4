// Kafka's StandardAuthorizer (org.apache.kafka.metadata.authorizer): decides
// whether a principal connecting from a host may perform an operation on a
// resource, from the ACL bindings it holds.
//
// The rules, as StandardAuthorizerData.authorize applies them:
// - a super user (super.users) may do everything;
// - the bindings that apply to a resource are its LITERAL name, the
//   LITERAL "*" of its type, and every PREFIXED pattern its name starts with;
//   of those, the ones for the principal or User:*, and for the host or *;
// - a matching DENY wins over any ALLOW;
// - ALL matches every operation; an ALLOW of READ, WRITE, DELETE or ALTER
//   also allows DESCRIBE, and ALTER_CONFIGS allows DESCRIBE_CONFIGS (a
//   DENY implies nothing: DENY READ does not deny DESCRIBE);
// - with no matching binding: denied if the resource has any binding at
//   all (for anyone), else allow.everyone.if.no.acl.found decides.
//
// Lookups scan the bindings of the resource type: Runnel's ACL counts are
// those of tests and small deployments (Kafka indexes them in a sorted set).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "security/authorizer/acl.h"
#include "security/principal.h"

namespace runnel::security {

struct AuthorizerOptions {
  std::set<std::string> super_users;  // "User:alice"
  bool allow_everyone_if_no_acl_found = false;
};

// super.users: principals separated by semicolons ("User:a;User:b"), blanks trimmed.
std::set<std::string> parse_super_users(const std::string& value);

class StandardAuthorizer {
 public:
  explicit StandardAuthorizer(AuthorizerOptions options) : options_(std::move(options)) {}

  // Replaces every binding (the stored set at `revision`); an older
  // revision than the one applied is ignored, so a watch event that arrives
  // after this broker's own newer write cannot roll it back.
  void replace(const std::vector<AclBinding>& acls, int64_t revision);
  int64_t revision() const { return revision_; }
  std::vector<AclBinding> acls() const;
  std::vector<AclBinding> acls(const AclBindingFilter& filter) const;

  bool is_super_user(const KafkaPrincipal& principal) const;
  bool authorize(const KafkaPrincipal& principal, const std::string& host, AclOperation op, ResourceType type,
                 const std::string& name) const;
  // Kafka's Authorizer.authorizeByResourceType: whether `op` is allowed on
  // at least one resource of `type` (an ALLOW, LITERAL or PREFIXED, that no
  // DENY covers; a DENY on LITERAL "*" covers all).
  bool authorize_by_resource_type(const KafkaPrincipal& principal, const std::string& host, AclOperation op,
                                  ResourceType type) const;

 private:
  AuthorizerOptions options_;
  std::map<ResourceType, std::set<AclBinding>> by_type_;
  int64_t revision_ = -1;
};

}  // namespace runnel::security
