#include "security/authorizer/acl_codec.h"

#include <algorithm>
#include <boost/json.hpp>

namespace runnel::security {

namespace json = boost::json;

std::string encode_acls(const std::vector<AclBinding>& acls) {
  std::vector<AclBinding> sorted = acls;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  json::array list;
  for (const auto& b : sorted)
    list.push_back(json::object{{"resource_type", name(b.resource_type)},
                                {"resource_name", b.resource_name},
                                {"pattern_type", name(b.pattern_type)},
                                {"principal", b.principal},
                                {"host", b.host},
                                {"operation", name(b.operation)},
                                {"permission", name(b.permission)}});
  return json::serialize(json::object{{"version", 1}, {"acls", std::move(list)}});
}

std::optional<std::vector<AclBinding>> decode_acls(const std::string& text) {
  boost::system::error_code ec;
  const json::value doc = json::parse(text, ec);
  if (ec || !doc.is_object()) return std::nullopt;
  const auto* list = doc.as_object().if_contains("acls");
  if (!list || !list->is_array()) return std::nullopt;
  std::vector<AclBinding> out;
  for (const auto& v : list->as_array()) {
    if (!v.is_object()) return std::nullopt;
    const auto& o = v.as_object();
    auto str = [&](const char* key) -> std::optional<std::string> {
      const auto* f = o.if_contains(key);
      if (!f || !f->is_string()) return std::nullopt;
      return std::string(f->as_string());
    };
    auto rt = str("resource_type"), rn = str("resource_name"), pt = str("pattern_type"), pr = str("principal"),
         host = str("host"), op = str("operation"), perm = str("permission");
    if (!rt || !rn || !pt || !pr || !host || !op || !perm) return std::nullopt;
    auto t = parse_resource_type(*rt);
    auto p = parse_pattern_type(*pt);
    auto operation = parse_acl_operation(*op);
    auto permission = parse_acl_permission_type(*perm);
    if (!t || !p || !operation || !permission) return std::nullopt;
    AclBinding b{*t, *rn, *p, *pr, *host, *operation, *permission};
    if (invalid_binding(b)) return std::nullopt;
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace runnel::security
