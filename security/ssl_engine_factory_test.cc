#include <catch2/catch.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "security/ssl_engine_factory.h"
#include "security/transport_layer.h"

using namespace runnel::security;

namespace {

// A self-signed EC certificate and its key, made with OpenSSL for the test.
struct TestIdentity {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  TestIdentity() {
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "C", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("US"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("Runnel"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("broker"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509_sign(cert, key, EVP_sha256());
  }
  ~TestIdentity() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  std::string cert_pem() const {
    BIO* b = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(b, cert);
    return drain(b);
  }
  std::string key_pem(const char* password = nullptr) const {
    BIO* b = BIO_new(BIO_s_mem());
    if (password)
      PEM_write_bio_PKCS8PrivateKey(b, key, EVP_aes_256_cbc(), nullptr, 0, nullptr, const_cast<char*>(password));
    else
      PEM_write_bio_PKCS8PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
    return drain(b);
  }
  std::string pkcs12(const char* password) const {
    PKCS12* p12 = PKCS12_create(password, "broker", key, cert, nullptr, 0, 0, 0, 0, 0);
    BIO* b = BIO_new(BIO_s_mem());
    i2d_PKCS12_bio(b, p12);
    PKCS12_free(p12);
    return drain(b);
  }
  static std::string drain(BIO* b) {
    char* data = nullptr;
    long n = BIO_get_mem_data(b, &data);
    std::string out(data, static_cast<size_t>(n));
    BIO_free(b);
    return out;
  }
};

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/runnel-ssl-test-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    close(fd);
    path = name;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

// Kafka's defaults under the given keys.
SslConfigLookup lookup(std::map<std::string, std::string> set) {
  std::map<std::string, std::string> defaults = {{"ssl.keystore.type", "JKS"},
                                                 {"ssl.truststore.type", "JKS"},
                                                 {"ssl.client.auth", "none"},
                                                 {"ssl.enabled.protocols", "TLSv1.2,TLSv1.3"}};
  for (auto& [k, v] : set) defaults[k] = v;
  return [defaults](const std::string& key) -> std::optional<std::string> {
    auto it = defaults.find(key);
    if (it == defaults.end()) return std::nullopt;
    return it->second;
  };
}

std::string error_of(const SslConfigLookup& config) {
  try {
    create_server_ssl_context(config);
    return "";
  } catch (const SslConfigError& e) {
    return e.what();
  }
}

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("PEM key stores: a file, inline, inline with its line breaks lost, an encrypted key", "[security][ssl]") {
  TestIdentity id;
  TempFile pem(id.key_pem() + id.cert_pem());
  REQUIRE(error_of(lookup({{"ssl.keystore.type", "PEM"}, {"ssl.keystore.location", pem.path}})) == "");
  REQUIRE(error_of(lookup({{"ssl.keystore.type", "PEM"},
                           {"ssl.keystore.key", id.key_pem()},
                           {"ssl.keystore.certificate.chain", id.cert_pem()}})) == "");
  auto joined = [](std::string s) {
    for (char& c : s)
      if (c == '\n') c = ' ';
    return s;
  };
  REQUIRE(error_of(lookup({{"ssl.keystore.type", "PEM"},
                           {"ssl.keystore.key", joined(id.key_pem())},
                           {"ssl.keystore.certificate.chain", joined(id.cert_pem())}})) == "");
  TempFile encrypted(id.key_pem("secret") + id.cert_pem());
  REQUIRE(error_of(lookup({{"ssl.keystore.type", "PEM"},
                           {"ssl.keystore.location", encrypted.path},
                           {"ssl.key.password", "secret"}})) == "");
  REQUIRE(mentions(error_of(lookup({{"ssl.keystore.type", "PEM"}, {"ssl.keystore.location", encrypted.path},
                                    {"ssl.key.password", "wrong"}})),
                   "no private key could be read"));
  // Kafka's rule: PEM takes no store password.
  REQUIRE(mentions(error_of(lookup({{"ssl.keystore.type", "PEM"}, {"ssl.keystore.location", pem.path},
                                    {"ssl.keystore.password", "x"}})),
                   "SSL key store password cannot be specified with PEM format"));
}

TEST_CASE("PKCS12 key stores need their password; JKS files are refused with how to convert", "[security][ssl]") {
  TestIdentity id;
  TempFile p12(id.pkcs12("storepass"));
  REQUIRE(error_of(lookup({{"ssl.keystore.type", "PKCS12"}, {"ssl.keystore.location", p12.path},
                           {"ssl.keystore.password", "storepass"}})) == "");
  // Kafka's default type JKS reads a PKCS12 file, as Java does.
  REQUIRE(error_of(lookup({{"ssl.keystore.location", p12.path}, {"ssl.keystore.password", "storepass"}})) == "");
  REQUIRE(mentions(error_of(lookup({{"ssl.keystore.type", "PKCS12"}, {"ssl.keystore.location", p12.path},
                                    {"ssl.keystore.password", "nope"}})),
                   "wrong ssl.keystore.password"));
  REQUIRE(mentions(error_of(lookup({{"ssl.keystore.type", "PKCS12"}, {"ssl.keystore.location", p12.path}})),
                   "key store password is not specified"));
  TempFile jks(std::string("\xFE\xED\xFE\xED\x00\x00\x00\x02", 8));
  auto e = error_of(lookup({{"ssl.keystore.location", jks.path}, {"ssl.keystore.password", "x"}}));
  REQUIRE(mentions(e, "Java KeyStore"));
  REQUIRE(mentions(e, "keytool -importkeystore"));
  REQUIRE(mentions(e, "PKCS12"));
}

TEST_CASE("missing key store, bad protocols, cipher suites and trust stores stop startup", "[security][ssl]") {
  TestIdentity id;
  TempFile pem(id.key_pem() + id.cert_pem());
  auto with = [&](std::map<std::string, std::string> more) {
    more.emplace("ssl.keystore.type", "PEM");
    more.emplace("ssl.keystore.location", pem.path);
    return error_of(lookup(more));
  };
  REQUIRE(mentions(error_of(lookup({})), "needs a key store"));
  REQUIRE(mentions(error_of(lookup({{"ssl.keystore.type", "PEM"}, {"ssl.keystore.location", "/nonexistent.pem"}})),
                   "/nonexistent.pem"));
  REQUIRE(mentions(with({{"ssl.enabled.protocols", "TLSv1.2,SSLv3"}}), "SSLv3"));
  REQUIRE(with({{"ssl.enabled.protocols", "TLSv1.3"}}) == "");
  REQUIRE(with({{"ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256"}}) == "");
  REQUIRE(mentions(with({{"ssl.cipher.suites", "TLS_NO_SUCH_SUITE"}}), "TLS_NO_SUCH_SUITE"));
  // A trust store for client certificates: PEM, inline PEM, PKCS12 without a key.
  TempFile ca(id.cert_pem());
  REQUIRE(with({{"ssl.client.auth", "required"}, {"ssl.truststore.type", "PEM"}, {"ssl.truststore.location", ca.path}}) == "");
  REQUIRE(with({{"ssl.client.auth", "required"}, {"ssl.truststore.type", "PEM"},
                {"ssl.truststore.certificates", id.cert_pem()}}) == "");
  REQUIRE(mentions(with({{"ssl.client.auth", "required"}, {"ssl.truststore.type", "PEM"},
                         {"ssl.truststore.location", ca.path}, {"ssl.truststore.password", "x"}}),
                   "SSL trust store password cannot be specified for PEM format"));
  TempFile trust12(id.pkcs12("trustpass"));
  REQUIRE(with({{"ssl.client.auth", "requested"}, {"ssl.truststore.type", "PKCS12"},
                {"ssl.truststore.location", trust12.path}, {"ssl.truststore.password", "trustpass"}}) == "");
}

TEST_CASE("a certificate's subject in RFC 2253 form, as Java writes it", "[security][ssl]") {
  TestIdentity id;
  REQUIRE(rfc2253_subject(id.cert) == "CN=broker,O=Runnel,C=US");
}
