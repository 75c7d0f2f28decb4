// ApiVersions (key 18): the versions of every API this broker serves.
// The response header is always v0 (KIP-511); an unsupported ApiVersions
// version is answered by the connection before any handler runs. v3+
// report the features finalized (KIP-584).
#include "broker/api_registry.h"
#include "broker/handlers/handlers.h"
#include "broker/transaction/transaction_version.h"
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
  // KIP-584 features (v3+, tagged): transaction.version 2 is finalized, as
  // on a new Kafka 4.x cluster, so clients that speak it use transaction
  // protocol v2 (KIP-890 part 2). The epoch never changes: Runnel has no
  // UpdateFeatures.
  using transaction::TransactionVersion;
  resp.supported_features.push_back({std::string(transaction::kTransactionVersionFeature),
                                     transaction::feature_level(TransactionVersion::tv0),
                                     transaction::feature_level(TransactionVersion::tv2),
                                     {}});
  resp.finalized_features_epoch = 0;
  resp.finalized_features.push_back({std::string(transaction::kTransactionVersionFeature),
                                     transaction::feature_level(transaction::kFinalizedTransactionVersion),
                                     transaction::feature_level(transaction::kFinalizedTransactionVersion),
                                     {}});
  co_return resp;
}

}  // namespace runnel::broker
