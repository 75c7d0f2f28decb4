// Base64 (RFC 4648, standard alphabet, padded): etcd's JSON gateway carries
// keys and values in it, SCRAM its salts, keys and nonces. Beast does the work.
#pragma once

#include <boost/beast/core/detail/base64.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace runnel {

inline std::string base64_encode(std::string_view bytes) {
  namespace b64 = boost::beast::detail::base64;
  std::string out(b64::encoded_size(bytes.size()), '\0');
  out.resize(b64::encode(out.data(), bytes.data(), bytes.size()));
  return out;
}

// nullopt when `text` is not base64.
inline std::optional<std::string> base64_decode(std::string_view text) {
  namespace b64 = boost::beast::detail::base64;
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(b64::decoded_size(text.size()), '\0');
  auto [written, read] = b64::decode(out.data(), text.data(), text.size());
  // Beast stops at the padding; anything else left over is not base64.
  if (text.substr(read).find_first_not_of('=') != std::string_view::npos || text.size() - read > 2) return std::nullopt;
  out.resize(written);
  return out;
}

// Base64url (RFC 4648 section 5, padding optional): JWS's compact
// serialization, which OAUTHBEARER's tokens use. nullopt when not base64url.
inline std::optional<std::string> base64url_decode(std::string_view text) {
  if (text.size() % 4 == 1 || text.find_first_of("+/") != std::string_view::npos) return std::nullopt;
  std::string standard(text);
  for (char& c : standard) c = c == '-' ? '+' : c == '_' ? '/' : c;
  standard.append((4 - standard.size() % 4) % 4, '=');
  return base64_decode(standard);
}

}  // namespace runnel
