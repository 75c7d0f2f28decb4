// Kafka's ScramCredential and ScramMechanism (RFC 5802, RFC 7677): what the
// broker keeps for a SCRAM user instead of the password. The client proves
// it knows the salted password; the broker holds only StoredKey (to check
// that proof) and ServerKey (to prove itself back), never the password.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace runnel::security::sasl {

enum class ScramMechanism : int8_t {
  // Kafka's ScramMechanism types, as AlterUserScramCredentials carries them.
  unknown = 0,
  sha256 = 1,
  sha512 = 2,
};

// "SCRAM-SHA-256" / "SCRAM-SHA-512"; unknown for any other name.
ScramMechanism scram_mechanism_from_name(std::string_view name);
std::string_view scram_mechanism_name(ScramMechanism m);
// Kafka's ScramMechanism.minIterations (4096 for both) and the most
// AlterUserScramCredentials accepts (Kafka's ScramControlManager: 16384).
constexpr int32_t kScramMinIterations = 4096;
constexpr int32_t kScramMaxIterations = 16384;

using Bytes = std::vector<uint8_t>;

struct ScramCredential {
  Bytes salt;
  Bytes stored_key;  // H(HMAC(SaltedPassword, "Client Key"))
  Bytes server_key;  // HMAC(SaltedPassword, "Server Key")
  int32_t iterations = 0;
  bool operator==(const ScramCredential&) const = default;
};

// Kafka's ScramFormatter: Hi(password, salt, i), the PBKDF2 of RFC 5802
// (OpenSSL's PKCS5_PBKDF2_HMAC with the mechanism's hash).
Bytes scram_salted_password(ScramMechanism m, std::string_view password, std::span<const uint8_t> salt,
                            int32_t iterations);
// The credential a salted password gives (what AlterUserScramCredentials
// sends: the client salts, the broker derives the keys).
ScramCredential scram_credential(ScramMechanism m, std::span<const uint8_t> salted_password,
                                 std::span<const uint8_t> salt, int32_t iterations);
// HMAC(key, data) and H(data) with the mechanism's hash, from OpenSSL.
Bytes scram_hmac(ScramMechanism m, std::span<const uint8_t> key, std::span<const uint8_t> data);
Bytes scram_hash(ScramMechanism m, std::span<const uint8_t> data);

// Kafka's ScramCredentialUtils.credentialToString form:
// "salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>"
// (base/base64.h), and back; nullopt for anything else.
std::string to_string(const ScramCredential& c);
std::optional<ScramCredential> parse_scram_credential(std::string_view s);

}  // namespace runnel::security::sasl
