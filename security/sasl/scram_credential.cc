#include "security/sasl/scram_credential.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <stdexcept>

#include "base/base64.h"

namespace runnel::security::sasl {

namespace {

const EVP_MD* digest(ScramMechanism m) {
  switch (m) {
    case ScramMechanism::sha256: return EVP_sha256();
    case ScramMechanism::sha512: return EVP_sha512();
    case ScramMechanism::unknown: break;
  }
  throw std::invalid_argument("not a SCRAM mechanism");
}

std::span<const uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string text_of(std::span<const uint8_t> b) { return std::string(b.begin(), b.end()); }

}  // namespace

ScramMechanism scram_mechanism_from_name(std::string_view name) {
  if (name == "SCRAM-SHA-256") return ScramMechanism::sha256;
  if (name == "SCRAM-SHA-512") return ScramMechanism::sha512;
  return ScramMechanism::unknown;
}

std::string_view scram_mechanism_name(ScramMechanism m) {
  switch (m) {
    case ScramMechanism::sha256: return "SCRAM-SHA-256";
    case ScramMechanism::sha512: return "SCRAM-SHA-512";
    case ScramMechanism::unknown: break;
  }
  return "UNKNOWN";
}

Bytes scram_salted_password(ScramMechanism m, std::string_view password, std::span<const uint8_t> salt,
                            int32_t iterations) {
  const EVP_MD* md = digest(m);
  Bytes out(static_cast<size_t>(EVP_MD_get_size(md)));
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), salt.data(), static_cast<int>(salt.size()),
                        iterations, md, static_cast<int>(out.size()), out.data()) != 1)
    throw std::runtime_error("PBKDF2 failed");
  return out;
}

Bytes scram_hmac(ScramMechanism m, std::span<const uint8_t> key, std::span<const uint8_t> data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  if (!HMAC(digest(m), key.data(), static_cast<int>(key.size()), data.data(), data.size(), out.data(), &len))
    throw std::runtime_error("HMAC failed");
  out.resize(len);
  return out;
}

Bytes scram_hash(ScramMechanism m, std::span<const uint8_t> data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &len, digest(m), nullptr) != 1)
    throw std::runtime_error("digest failed");
  out.resize(len);
  return out;
}

ScramCredential scram_credential(ScramMechanism m, std::span<const uint8_t> salted_password,
                                 std::span<const uint8_t> salt, int32_t iterations) {
  ScramCredential c;
  c.salt.assign(salt.begin(), salt.end());
  c.stored_key = scram_hash(m, scram_hmac(m, salted_password, bytes_of("Client Key")));
  c.server_key = scram_hmac(m, salted_password, bytes_of("Server Key"));
  c.iterations = iterations;
  return c;
}

std::string to_string(const ScramCredential& c) {
  return "salt=" + base64_encode(text_of(c.salt)) + ",stored_key=" + base64_encode(text_of(c.stored_key)) +
         ",server_key=" + base64_encode(text_of(c.server_key)) + ",iterations=" + std::to_string(c.iterations);
}

std::optional<ScramCredential> parse_scram_credential(std::string_view s) {
  ScramCredential c;
  bool salt = false, stored = false, server = false, iterations = false;
  while (!s.empty()) {
    auto comma = s.find(',');
    auto field = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    auto eq = field.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    auto name = field.substr(0, eq);
    auto value = field.substr(eq + 1);
    if (name == "iterations") {
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), c.iterations);
      if (ec != std::errc() || p != value.data() + value.size() || iterations) return std::nullopt;
      iterations = true;
      continue;
    }
    Bytes* target = name == "salt" ? &c.salt : name == "stored_key" ? &c.stored_key : name == "server_key" ? &c.server_key : nullptr;
    bool* seen = name == "salt" ? &salt : name == "stored_key" ? &stored : &server;
    if (!target || *seen) return std::nullopt;
    auto decoded = base64_decode(value);
    if (!decoded) return std::nullopt;
    target->assign(decoded->begin(), decoded->end());
    *seen = true;
  }
  if (!(salt && stored && server && iterations)) return std::nullopt;
  return c;
}

}  // namespace runnel::security::sasl
