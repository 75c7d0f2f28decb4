// The stored form of the ACL bindings (metadata key "acls",
// cluster/etcd/key_layout.h; on a single node runnel-acls.json):
//   {"version":1,"acls":[{"resource_type":"TOPIC","resource_name":"orders",
//     "pattern_type":"LITERAL","principal":"User:alice","host":"*",
//     "operation":"READ","permission":"ALLOW"}, ...]}
// with Kafka's enum names, sorted, each binding once.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "security/authorizer/acl.h"

namespace runnel::security {

std::string encode_acls(const std::vector<AclBinding>& acls);
// nullopt when the text is not a stored ACL set (a damaged file or key).
std::optional<std::vector<AclBinding>> decode_acls(const std::string& text);

}  // namespace runnel::security
