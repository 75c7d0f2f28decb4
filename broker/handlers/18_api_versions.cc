// ApiVersions (key 18): the versions of every API this broker serves.
// The response header is always v0 (KIP-511); an unsupported ApiVersions
// version is answered by the connection before any handler runs.
#include "broker/api_registry.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::ApiVersionsResponse> handle<p::ApiVersionsApi>(RequestContext& ctx, p::ApiVersionsRequest& req) {
  p::ApiVersionsResponse resp;
  // v3+ requests carry the client's software name and version; Kafka checks
  // them against [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? and answers
  // INVALID_REQUEST when they do not match.
  if (ctx.api_version() >= 3) {
    auto valid = [](const std::string& s) {
      if (s.empty()) return false;
      auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
      if (!alnum(s.front()) || !alnum(s.back())) return false;
      for (char c : s)
        if (!alnum(c) && c != '-' && c != '.') return false;
      return true;
    };
    if (!valid(req.client_software_name) || !valid(req.client_software_version)) {
      resp.error_code = p::code(p::ErrorCode::invalid_request);
      co_return resp;
    }
  }
  for (const ApiRoute& r : api_routes()) resp.api_keys.push_back({r.key, r.min_version, r.max_version, {}});
  co_return resp;
}

}  // namespace runnel::broker
