#include "broker/scram_credentials_codec.h"

#include <boost/json.hpp>

namespace runnel::broker {

namespace json = boost::json;
using security::sasl::ScramMechanism;

std::string encode_scram_credentials(const ScramCredentials& credentials) {
  json::object users;
  for (const auto& [user, mechanisms] : credentials) {
    if (mechanisms.empty()) continue;
    json::object by_mechanism;
    for (const auto& [mechanism, credential] : mechanisms)
      by_mechanism[security::sasl::scram_mechanism_name(mechanism)] = security::sasl::to_string(credential);
    users[user] = std::move(by_mechanism);
  }
  return json::serialize(json::object{{"version", 1}, {"users", std::move(users)}});
}

std::optional<ScramCredentials> decode_scram_credentials(const std::string& text) {
  boost::system::error_code ec;
  const json::value doc = json::parse(text, ec);
  if (ec || !doc.is_object()) return std::nullopt;
  const auto* users = doc.as_object().if_contains("users");
  if (!users || !users->is_object()) return std::nullopt;
  ScramCredentials out;
  for (const auto& user : users->as_object()) {
    const auto* mechanisms = user.value().if_object();
    if (!mechanisms || mechanisms->empty()) return std::nullopt;
    auto& mine = out[std::string(user.key())];
    for (const auto& entry : *mechanisms) {
      const ScramMechanism mechanism =
          security::sasl::scram_mechanism_from_name(std::string_view(entry.key().data(), entry.key().size()));
      const auto* stored = entry.value().if_string();
      if (mechanism == ScramMechanism::unknown || !stored) return std::nullopt;
      auto credential = security::sasl::parse_scram_credential(std::string_view(stored->data(), stored->size()));
      if (!credential) return std::nullopt;
      mine[mechanism] = std::move(*credential);
    }
  }
  return out;
}

}  // namespace runnel::broker
