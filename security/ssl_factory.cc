#include "security/ssl_factory.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <algorithm>
#include <boost/asio/ssl/context.hpp>

namespace runnel::security {

namespace {

namespace ssl = boost::asio::ssl;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

std::string subject_rfc2253(X509* cert) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  X509_NAME_print_ex(bio.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  return bio_text(bio.get());
}

std::set<std::string> subject_alt_names(X509* cert) {
  std::set<std::string> out;
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    GENERAL_NAME_print(bio.get(), sk_GENERAL_NAME_value(names, i));
    out.insert(bio_text(bio.get()));
  }
  GENERAL_NAMES_free(names);
  return out;
}

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return "[" + out + "]";
}

// Kafka's CertificateEntries.ensureCompatible.
void ensure_compatible(const std::vector<CertificateEntry>& next, const std::vector<CertificateEntry>& current,
                       const SslFactory::Options& options) {
  if (options.allow_dn_changes && options.allow_san_changes) return;
  if (next.size() != current.size())
    throw SslConfigError("Keystore entries do not match, existing store contains " + std::to_string(current.size()) +
                         " entries, new store contains " + std::to_string(next.size()) + " entries");
  for (size_t i = 0; i < next.size(); ++i) {
    if (!options.allow_dn_changes && next[i].subject != current[i].subject)
      throw SslConfigError("Keystore DistinguishedName does not match:  existing={DN=" + current[i].subject +
                           "}, new={DN=" + next[i].subject + "}");
    if (!options.allow_san_changes &&
        !std::includes(next[i].subject_alt_names.begin(), next[i].subject_alt_names.end(),
                       current[i].subject_alt_names.begin(), current[i].subject_alt_names.end()))
      throw SslConfigError("Keystore SubjectAltNames do not match:  existing={SAN=" +
                           join(current[i].subject_alt_names) + "}, new={SAN=" + join(next[i].subject_alt_names) + "}");
  }
}

bool has_truststore(const std::map<std::string, std::optional<std::string>>& values) {
  auto set = [&](const char* key) {
    auto it = values.find(key);
    return it != values.end() && it->second.has_value();
  };
  return set("ssl.truststore.location") || set("ssl.truststore.certificates");
}

// One side of an in-memory handshake: true once done, throws on failure.
bool step(SSL* ssl, const char* side) {
  int rc = SSL_do_handshake(ssl);
  if (rc == 1) return true;
  int err = SSL_get_error(ssl, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return false;
  std::string why = ERR_peek_error() ? openssl_errors() : std::string();
  long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) why += (why.empty() ? "" : "; ") + std::string(X509_verify_cert_error_string(verify));
  throw SslConfigError(std::string("TLS handshake failed on the ") + side + " side: " +
                       (why.empty() ? "no detail from OpenSSL" : why));
}

}  // namespace

const std::vector<std::string>& reconfigurable_ssl_configs() {
  static const std::vector<std::string> keys = {
      "ssl.keystore.type",   "ssl.keystore.location",   "ssl.keystore.password",   "ssl.key.password",
      "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.keystore.certificate.chain",
      "ssl.keystore.key",    "ssl.truststore.certificates"};
  return keys;
}

bool SslFactory::FileStamp::operator==(const FileStamp& o) const {
  return path == o.path && modified.tv_sec == o.modified.tv_sec && modified.tv_nsec == o.modified.tv_nsec;
}

std::vector<SslFactory::FileStamp> SslFactory::stamps(
    const std::map<std::string, std::optional<std::string>>& values) {
  std::vector<FileStamp> out;
  for (const char* key : {"ssl.keystore.location", "ssl.truststore.location"}) {
    auto it = values.find(key);
    if (it == values.end() || !it->second) continue;
    FileStamp s{*it->second, {}};
    struct stat st {};
    if (::stat(s.path.c_str(), &st) == 0) s.modified = st.st_mtim;
    out.push_back(std::move(s));
  }
  return out;
}

std::shared_ptr<const SslFactory> SslFactory::create(const SslConfigLookup& config, Options options) {
  auto f = std::make_shared<SslFactory>();
  for (const auto& key : reconfigurable_ssl_configs()) f->values_[key] = config(key);
  // Stamped before reading, so a file rewritten meanwhile reads as changed
  // next time rather than never.
  f->files_ = stamps(f->values_);
  f->context_ = create_server_ssl_context(config);
  f->entries_ = certificate_entries(*f->context_);
  f->has_truststore_ = has_truststore(f->values_);
  f->options_ = options;
  if (options.inter_broker) f->client_ = create_client_ssl_context(config);
  return f;
}

std::shared_ptr<const SslFactory> SslFactory::reconfigured(const SslConfigLookup& next, bool reload_modified) const {
  std::map<std::string, std::optional<std::string>> values;
  for (const auto& key : reconfigurable_ssl_configs()) values[key] = next(key);
  // Kafka's shouldBeRebuilt.
  if (values == values_ && (!reload_modified || stamps(values) == files_)) return nullptr;
  if (!has_truststore_ && has_truststore(values))
    throw SslConfigError("Cannot add SSL truststore to an existing listener for which no truststore was configured.");
  std::shared_ptr<const SslFactory> f = create(next, options_);
  ensure_compatible(f->entries_, entries_, options_);
  if (options_.inter_broker) {
    validate_handshake(*context_, *f->client_);
    validate_handshake(*f->context_, *client_);
  }
  return f;
}

std::vector<CertificateEntry> certificate_entries(ssl::context& context) {
  std::vector<CertificateEntry> out;
  if (X509* cert = SSL_CTX_get0_certificate(context.native_handle()))
    out.push_back({subject_rfc2253(cert), subject_alt_names(cert)});
  return out;
}

void validate_handshake(ssl::context& server, ssl::context& client) {
  std::unique_ptr<SSL, decltype(&SSL_free)> s(SSL_new(server.native_handle()), SSL_free);
  std::unique_ptr<SSL, decltype(&SSL_free)> c(SSL_new(client.native_handle()), SSL_free);
  if (!s || !c) throw SslConfigError("Cannot create TLS sessions to validate the new stores: " + openssl_errors());
  BIO* server_bio = nullptr;
  BIO* client_bio = nullptr;
  if (!BIO_new_bio_pair(&server_bio, 0, &client_bio, 0))
    throw SslConfigError("Cannot create a BIO pair to validate the new stores: " + openssl_errors());
  SSL_set_bio(s.get(), server_bio, server_bio);  // each SSL owns its end
  SSL_set_bio(c.get(), client_bio, client_bio);
  SSL_set_accept_state(s.get());
  SSL_set_connect_state(c.get());
  // A TLS 1.3 handshake takes a few flights; each round moves every byte
  // the other side wrote, so a bound of rounds cannot cut a good one short.
  bool client_done = false;
  bool server_done = false;
  for (int round = 0; round < 16 && !(client_done && server_done); ++round) {
    if (!client_done) client_done = step(c.get(), "client");
    if (!server_done) server_done = step(s.get(), "server");
  }
  if (!(client_done && server_done)) throw SslConfigError("TLS handshake did not complete");
}

}  // namespace runnel::security
