// SASL tokens are bytes; the mechanisms read and write them as text, and
// SCRAM and OAUTHBEARER share two of RFC 5802's character classes as Kafka
// writes them (its SASLNAME and ALPHA patterns).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace runnel::security::sasl {

inline std::span<const uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

inline std::string_view as_text(std::span<const uint8_t> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

inline std::vector<uint8_t> to_bytes(std::string_view s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// SASLNAME: one or more of [\x01-\x7F] but '=' and ',', or =2C / =3D.
inline bool is_sasl_name(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '=') {
      std::string_view escape = s.substr(i, 3);
      if (escape != "=2C" && escape != "=3D") return false;
      i += 2;
    } else if (c < 0x01 || c > 0x7F || c == ',') {
      return false;
    }
  }
  return true;
}

// ALPHA+: extension keys in both mechanisms.
inline bool is_alpha(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) return false;
  return true;
}

}  // namespace runnel::security::sasl
