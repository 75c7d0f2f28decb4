#include "security/ssl_engine_factory.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace runnel::security {

namespace {

namespace ssl = boost::asio::ssl;

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct Pkcs12Free {
  void operator()(PKCS12* p) const { PKCS12_free(p); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

// A private key and the certificate chain that goes with it, leaf first.
struct KeyStore {
  Pkey key;
  std::vector<Cert> chain;
};

[[noreturn]] void fail(const std::string& message) {
  throw SslConfigError(message + " (" + openssl_errors() + ")");
}

std::string read_file(const std::string& key, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SslConfigError("Failed to load SSL keystore/truststore " + path + " (" + key + "): cannot read it");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A read-only BIO over `bytes`, which must outlive it (no copy is made).
Bio memory_bio(const std::string& bytes) { return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size()))); }

// PEM as OpenSSL reads it: the BEGIN and END lines on lines of their own and
// the base64 in lines of 64. Kafka takes inline PEM (ssl.keystore.key, ...)
// with its line breaks lost, as a properties file's continuation lines
// join them; a block with header fields (old "Proc-Type:" keys) is kept.
std::string normalize_pem(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (true) {
    size_t begin = text.find("-----BEGIN ", at);
    if (begin == std::string::npos) break;
    size_t begin_end = text.find("-----", begin + 11);
    if (begin_end == std::string::npos) break;
    begin_end += 5;
    const std::string label = text.substr(begin + 11, begin_end - 5 - (begin + 11));
    const std::string end_line = "-----END " + label + "-----";
    size_t end = text.find(end_line, begin_end);
    if (end == std::string::npos) break;
    std::string body = text.substr(begin_end, end - begin_end);
    out += "-----BEGIN " + label + "-----\n";
    if (body.find(':') != std::string::npos) {
      out += body;
    } else {
      std::string b64;
      for (char c : body)
        if (!std::isspace(static_cast<unsigned char>(c))) b64 += c;
      for (size_t i = 0; i < b64.size(); i += 64) out += b64.substr(i, 64) + "\n";
    }
    out += end_line + "\n";
    at = end + end_line.size();
  }
  return out;
}

std::vector<Cert> pem_certificates(const std::string& pem) {
  std::vector<Cert> out;
  const std::string normalized = normalize_pem(pem);  // the BIO reads it in place
  Bio bio = memory_bio(normalized);
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) out.emplace_back(x);
  ERR_clear_error();  // the read that found no further certificate
  return out;
}

// Java's keystore magic numbers: JKS and JCEKS, which OpenSSL cannot read.
bool is_java_keystore(const std::string& bytes) {
  if (bytes.size() < 4) return false;
  auto b = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  uint32_t magic = (uint32_t{b(0)} << 24) | (uint32_t{b(1)} << 16) | (uint32_t{b(2)} << 8) | b(3);
  return magic == 0xFEEDFEED || magic == 0xCECECECE;
}

[[noreturn]] void refuse_jks(const std::string& prefix, const std::string& path) {
  throw SslConfigError(prefix + ".type JKS: " + path +
                       " is a Java KeyStore, which Runnel (OpenSSL) cannot read; convert it to PKCS12 with "
                       "`keytool -importkeystore -srckeystore " + path + " -srcstoretype JKS -destkeystore " + path +
                       ".p12 -deststoretype PKCS12` and set " + prefix + ".location to the new file and " + prefix +
                       ".type=PKCS12");
}

struct Pkcs12Contents {
  Pkey key;
  Cert cert;
  std::vector<Cert> others;
};

// OpenSSL's PKCS12 parser; nullopt when `password` does not open the store.
std::optional<Pkcs12Contents> parse_pkcs12(const std::string& bytes, const char* password) {
  Bio bio = memory_bio(bytes);
  std::unique_ptr<PKCS12, Pkcs12Free> p12(d2i_PKCS12_bio(bio.get(), nullptr));
  if (!p12) return std::nullopt;
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  STACK_OF(X509)* ca = nullptr;
  if (!PKCS12_parse(p12.get(), password, &key, &cert, &ca)) return std::nullopt;
  Pkcs12Contents out{Pkey(key), Cert(cert), {}};
  while (ca && sk_X509_num(ca) > 0) out.others.emplace_back(sk_X509_shift(ca));
  sk_X509_free(ca);
  return out;
}

std::string get(const SslConfigLookup& config, const std::string& key) { return config(key).value_or(""); }

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

KeyStore pem_keystore(const std::string& key_pem, const std::string& chain_pem, const std::string& source,
                      const std::optional<std::string>& key_password) {
  KeyStore ks;
  const std::string normalized = normalize_pem(key_pem);  // the BIO reads it in place
  Bio bio = memory_bio(normalized);
  // With a password OpenSSL decrypts an ENCRYPTED PRIVATE KEY (PKCS#8, as
  // Kafka requires); without one, a key that needs one fails here.
  char* pass = key_password ? const_cast<char*>(key_password->c_str()) : const_cast<char*>("");
  ks.key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, pass));
  if (!ks.key)
    fail("Failed to load SSL keystore " + source +
         ": no private key could be read (is ssl.key.password right for an encrypted key?)");
  ks.chain = pem_certificates(chain_pem);
  if (ks.chain.empty()) fail("Failed to load SSL keystore " + source + ": no certificate chain found");
  return ks;
}

KeyStore load_keystore(const SslConfigLookup& config) {
  const std::string type = upper(get(config, "ssl.keystore.type"));
  const auto location = config("ssl.keystore.location");
  const auto password = config("ssl.keystore.password");
  const auto key_password = config("ssl.key.password");
  const auto inline_key = config("ssl.keystore.key");
  const auto inline_chain = config("ssl.keystore.certificate.chain");
  if (inline_key || inline_chain) {
    if (type != "PEM")
      throw SslConfigError("ssl.keystore.key and ssl.keystore.certificate.chain are only supported with "
                           "ssl.keystore.type=PEM (it is " + type + ")");
    if (location)
      throw SslConfigError("ssl.keystore.location cannot be set together with ssl.keystore.key/"
                           "ssl.keystore.certificate.chain");
    if (!inline_key || !inline_chain)
      throw SslConfigError("ssl.keystore.key and ssl.keystore.certificate.chain must both be set");
    if (password) throw SslConfigError("SSL key store password cannot be specified with PEM format, only key password may be specified");
    return pem_keystore(*inline_key, *inline_chain, "ssl.keystore.key", key_password);
  }
  if (!location) throw SslConfigError("An SSL listener needs a key store: set ssl.keystore.location (or, for PEM, ssl.keystore.key and ssl.keystore.certificate.chain)");
  const std::string bytes = read_file("ssl.keystore.location", *location);
  if (type == "PEM") {
    if (password) throw SslConfigError("SSL key store password cannot be specified with PEM format, only key password may be specified");
    return pem_keystore(bytes, bytes, *location, key_password);
  }
  if (type != "PKCS12" && type != "JKS")
    throw SslConfigError("Invalid value " + type + " for configuration ssl.keystore.type: Runnel reads PEM and PKCS12");
  if (is_java_keystore(bytes)) refuse_jks("ssl.keystore", *location);
  if (!password) throw SslConfigError("SSL key store is specified, but key store password is not specified.");
  auto p12 = parse_pkcs12(bytes, password->c_str());
  if (!p12 && key_password) p12 = parse_pkcs12(bytes, key_password->c_str());
  if (!p12) fail("Failed to load SSL keystore " + *location + " of type PKCS12 (wrong ssl.keystore.password?)");
  if (!p12->key || !p12->cert) throw SslConfigError("SSL key store " + *location + " holds no private key and certificate");
  KeyStore ks;
  ks.key = std::move(p12->key);
  ks.chain.push_back(std::move(p12->cert));
  for (auto& c : p12->others) ks.chain.push_back(std::move(c));
  return ks;
}

// Who may sign a client certificate: the trust store's certificates, or the
// system's CAs when none is set.
void load_truststore(const SslConfigLookup& config, SSL_CTX* ctx) {
  const std::string type = upper(get(config, "ssl.truststore.type"));
  const auto location = config("ssl.truststore.location");
  const auto password = config("ssl.truststore.password");
  const auto certificates = config("ssl.truststore.certificates");
  std::vector<Cert> trusted;
  if (certificates) {
    if (type != "PEM")
      throw SslConfigError("ssl.truststore.certificates is only supported with ssl.truststore.type=PEM (it is " + type + ")");
    if (location) throw SslConfigError("ssl.truststore.location cannot be set together with ssl.truststore.certificates");
    trusted = pem_certificates(*certificates);
  } else if (location) {
    const std::string bytes = read_file("ssl.truststore.location", *location);
    if (type == "PEM") {
      if (password) throw SslConfigError("SSL trust store password cannot be specified for PEM format.");
      trusted = pem_certificates(bytes);
    } else if (type == "PKCS12" || type == "JKS") {
      if (is_java_keystore(bytes)) refuse_jks("ssl.truststore", *location);
      // A trust store needs no password to be read (Java checks its
      // integrity only when one is given).
      auto p12 = parse_pkcs12(bytes, password ? password->c_str() : nullptr);
      if (!p12 && !password) p12 = parse_pkcs12(bytes, "");
      if (!p12) fail("Failed to load SSL truststore " + *location + " of type PKCS12 (wrong ssl.truststore.password?)");
      if (p12->cert) trusted.push_back(std::move(p12->cert));
      for (auto& c : p12->others) trusted.push_back(std::move(c));
    } else {
      throw SslConfigError("Invalid value " + type + " for configuration ssl.truststore.type: Runnel reads PEM and PKCS12");
    }
  } else {
    if (!SSL_CTX_set_default_verify_paths(ctx)) fail("Cannot load the system's trusted CAs");
    return;
  }
  if (trusted.empty()) throw SslConfigError("SSL trust store " + location.value_or("ssl.truststore.certificates") + " holds no certificate");
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  for (auto& c : trusted)
    if (!X509_STORE_add_cert(store, c.get())) fail("Cannot add a trust store certificate");
}

int protocol_version(const std::string& name) {
  static const std::map<std::string, int> versions = {
      {"TLSv1", TLS1_VERSION}, {"TLSv1.1", TLS1_1_VERSION}, {"TLSv1.2", TLS1_2_VERSION}, {"TLSv1.3", TLS1_3_VERSION}};
  auto it = versions.find(name);
  if (it == versions.end())
    throw SslConfigError("Invalid value " + name + " in ssl.enabled.protocols: Runnel knows TLSv1, TLSv1.1, TLSv1.2 and TLSv1.3");
  return it->second;
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto b = item.find_first_not_of(" \t");
    auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

// ssl.enabled.protocols as OpenSSL's version range; a version inside the
// range that is not listed is switched off on its own.
void set_protocols(const SslConfigLookup& config, SSL_CTX* ctx) {
  auto names = split_list(get(config, "ssl.enabled.protocols"));
  if (names.empty()) throw SslConfigError("ssl.enabled.protocols is empty: no TLS version could be negotiated");
  std::vector<int> enabled;
  for (const auto& n : names) enabled.push_back(protocol_version(n));
  const int lo = *std::min_element(enabled.begin(), enabled.end());
  const int hi = *std::max_element(enabled.begin(), enabled.end());
  SSL_CTX_set_min_proto_version(ctx, lo);
  SSL_CTX_set_max_proto_version(ctx, hi);
  const std::pair<int, uint64_t> off[] = {
      {TLS1_VERSION, SSL_OP_NO_TLSv1}, {TLS1_1_VERSION, SSL_OP_NO_TLSv1_1}, {TLS1_2_VERSION, SSL_OP_NO_TLSv1_2},
      {TLS1_3_VERSION, SSL_OP_NO_TLSv1_3}};
  for (auto [version, option] : off)
    if (version > lo && version < hi && std::find(enabled.begin(), enabled.end(), version) == enabled.end())
      SSL_CTX_set_options(ctx, option);
}

// ssl.cipher.suites: Java takes IANA names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256);
// OpenSSL names TLS 1.2 suites its own way (ECDHE-RSA-AES128-GCM-SHA256)
// and TLS 1.3 suites by their IANA names, each in its own list.
void set_cipher_suites(const SslConfigLookup& config, SSL_CTX* ctx) {
  auto suites = split_list(get(config, "ssl.cipher.suites"));
  if (suites.empty()) return;  // OpenSSL's defaults, as Java's when unset
  std::string tls13, tls12;
  for (const auto& s : suites) {
    const bool is_tls13 = s.starts_with("TLS_AES_") || s.starts_with("TLS_CHACHA20_");
    std::string name = s;
    if (!is_tls13 && s.starts_with("TLS_")) {
      const char* openssl_name = OPENSSL_cipher_name(s.c_str());
      if (!openssl_name || std::string(openssl_name) == "(NONE)")
        throw SslConfigError("Invalid value " + s + " in ssl.cipher.suites: OpenSSL knows no such cipher suite");
      name = openssl_name;
    }
    std::string& list = is_tls13 ? tls13 : tls12;
    list += (list.empty() ? "" : ":") + name;
  }
  if (!SSL_CTX_set_ciphersuites(ctx, tls13.c_str()))
    fail("Invalid value " + tls13 + " in ssl.cipher.suites (TLS 1.3 suites)");
  if (tls12.empty()) {
    // Only TLS 1.3 suites listed: TLS 1.2 has none left to negotiate.
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  } else if (!SSL_CTX_set_cipher_list(ctx, tls12.c_str())) {
    fail("Invalid value " + tls12 + " in ssl.cipher.suites");
  }
}

void set_client_auth(const SslConfigLookup& config, SSL_CTX* ctx) {
  const std::string mode = get(config, "ssl.client.auth");
  int verify = SSL_VERIFY_NONE;
  if (mode == "required")
    verify = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  else if (mode == "requested")
    verify = SSL_VERIFY_PEER;
  else if (mode != "none" && !mode.empty())
    throw SslConfigError("Invalid value " + mode + " for configuration ssl.client.auth: String must be one of: required, requested, none");
  SSL_CTX_set_verify(ctx, verify, nullptr);
  if (verify == SSL_VERIFY_NONE) return;
  load_truststore(config, ctx);
  // With client certificates verified, OpenSSL resumes a session (the Java
  // client's second connection offers one) only within a session id
  // context; without it the handshake fails ("session id context
  // uninitialized").
  static const unsigned char kContext[] = "runnel";
  if (!SSL_CTX_set_session_id_context(ctx, kContext, sizeof kContext - 1)) fail("Cannot set the session id context");
}

void use_keystore(const KeyStore& ks, SSL_CTX* ctx) {
  if (!SSL_CTX_use_certificate(ctx, ks.chain.front().get())) fail("Cannot use the key store's certificate");
  for (size_t i = 1; i < ks.chain.size(); ++i)
    if (!SSL_CTX_add1_chain_cert(ctx, ks.chain[i].get())) fail("Cannot use the key store's certificate chain");
  if (!SSL_CTX_use_PrivateKey(ctx, ks.key.get())) fail("Cannot use the key store's private key");
  if (!SSL_CTX_check_private_key(ctx)) fail("The key store's private key does not match its certificate");
}

}  // namespace

std::string openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "no detail from OpenSSL" : out;
}

std::shared_ptr<ssl::context> create_server_ssl_context(const SslConfigLookup& config) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* ctx = context->native_handle();
  // Kafka's SslTransportLayer refuses renegotiation.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  set_protocols(config, ctx);
  set_cipher_suites(config, ctx);
  use_keystore(load_keystore(config), ctx);
  set_client_auth(config, ctx);
  return context;
}

std::shared_ptr<ssl::context> create_client_ssl_context(const SslConfigLookup& config) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX* ctx = context->native_handle();
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  set_protocols(config, ctx);
  set_cipher_suites(config, ctx);
  if (config("ssl.keystore.location") || config("ssl.keystore.key")) use_keystore(load_keystore(config), ctx);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  load_truststore(config, ctx);
  return context;
}

}  // namespace runnel::security
