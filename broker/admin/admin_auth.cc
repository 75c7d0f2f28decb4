#include "broker/admin/admin_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>

#include "base/base64.h"
#include "broker/admin/admin_server.h"
#include "broker/security_config.h"
#include "security/ssl_engine_factory.h"

namespace runnel::broker::admin {

namespace sasl = security::sasl;

namespace {

// The listener name the https:// admin listeners' per-listener ssl.* keys
// are under: listener.name.https.ssl.keystore.location, ...
constexpr const char* kHttpsListener = "https";

bool equal_bytes(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::shared_ptr<asio::ssl::context> admin_ssl_context(const BrokerConfig& config) {
  const auto listeners = admin_listeners(config);
  const bool https = std::any_of(listeners.begin(), listeners.end(),
                                 [](const Listener& l) { return l.name == kHttpsListener; });
  if (!https) return nullptr;
  security::SslConfigLookup lookup = [&config](const std::string& key) {
    return listener_value(config, kHttpsListener, key);
  };
  try {
    auto context = security::create_server_ssl_context(lookup);
    if (!lookup("ssl.keystore.location") && !lookup("ssl.keystore.key"))
      throw security::SslConfigError("an https admin listener needs a key store: set ssl.keystore.location "
                                     "(or listener.name.https.ssl.keystore.location)");
    return context;
  } catch (const security::SslConfigError& e) {
    throw ConfigError(std::string("Invalid TLS configuration of the https admin listener (runnel.admin.listeners): ") +
                      e.what());
  }
}

std::optional<BasicCredentials> parse_basic_authorization(std::string_view header) {
  // RFC 7617: the scheme is case-insensitive, one space, then the token.
  constexpr std::string_view kScheme = "basic ";
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return std::nullopt;
  std::string_view token = header.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  auto decoded = base64_decode(token);
  if (!decoded) return std::nullopt;
  // The user id cannot hold a colon; the password may.
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  return BasicCredentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

AdminAuthenticator::AdminAuthenticator(const BrokerConfig& config, CredentialLookup lookup)
    : lookup_(std::move(lookup)), mac_key_(32) {
  const std::string method = config.get_string("runnel.admin.authentication.method");
  basic_ = method == "BASIC";
  skip_paths_ = config.get_list("runnel.admin.authentication.skip.paths");
  if (RAND_bytes(mac_key_.data(), static_cast<int>(mac_key_.size())) != 1)
    throw ConfigError("the admin listener's authentication could not get random bytes from OpenSSL");
  try {
    mapper_.emplace(listener_value(config, kHttpsListener, "ssl.principal.mapping.rules").value_or("DEFAULT"));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("Invalid value for configuration ssl.principal.mapping.rules: ") + e.what());
  }
}

bool AdminAuthenticator::requires_basic(std::string_view path) const {
  if (!basic_) return false;
  return std::find(skip_paths_.begin(), skip_paths_.end(), path) == skip_paths_.end();
}

std::vector<uint8_t> AdminAuthenticator::password_mac(std::string_view password) const {
  std::vector<uint8_t> out(EVP_MAX_MD_SIZE);
  unsigned int n = 0;
  HMAC(EVP_sha256(), mac_key_.data(), static_cast<int>(mac_key_.size()),
       reinterpret_cast<const unsigned char*>(password.data()), password.size(), out.data(), &n);
  out.resize(n);
  return out;
}

bool AdminAuthenticator::matches(const std::string& user, std::string_view password, sasl::ScramMechanism m,
                                 const sasl::ScramCredential& credential) {
  const auto mac = password_mac(password);
  if (auto it = remembered_.find(user); it != remembered_.end() && it->second.mechanism == m &&
                                         it->second.credential == credential)
    return equal_bytes(it->second.password_mac, mac);
  auto salted = sasl::scram_salted_password(m, password, credential.salt, credential.iterations);
  auto derived = sasl::scram_credential(m, salted, credential.salt, credential.iterations);
  if (!equal_bytes(derived.stored_key, credential.stored_key)) return false;
  // Bounded: a flood of distinct users cannot grow it without limit.
  if (remembered_.size() >= kMaxRemembered) remembered_.clear();
  remembered_[user] = Remembered{m, credential, mac};
  return true;
}

std::optional<security::KafkaPrincipal> AdminAuthenticator::basic(std::string_view authorization) {
  auto credentials = parse_basic_authorization(authorization);
  if (!credentials || !lookup_) return std::nullopt;
  for (auto m : {sasl::ScramMechanism::sha512, sasl::ScramMechanism::sha256}) {
    auto stored = lookup_(credentials->user, m);
    if (stored && matches(credentials->user, credentials->password, m, *stored))
      return security::KafkaPrincipal{"User", credentials->user};
  }
  return std::nullopt;
}

std::optional<security::KafkaPrincipal> AdminAuthenticator::certificate(const std::string& subject_dn) const {
  auto name = mapper_->name(subject_dn);
  if (!name) return std::nullopt;
  return security::KafkaPrincipal{"User", *name};
}

}  // namespace runnel::broker::admin
