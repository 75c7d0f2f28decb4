// What the TLS unit tests share: certificates made with OpenSSL, key store
// files, and a config lookup with Kafka's defaults.
#pragma once

#include <catch2/catch.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "security/ssl_engine_factory.h"

namespace runnel::security::testing {

// A self-signed EC certificate and its key, made with OpenSSL for the test.
struct TestIdentity {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  // `alt_names` as OpenSSL's config syntax, e.g. "DNS:localhost,IP:127.0.0.1".
  explicit TestIdentity(const char* cn = "broker", const char* alt_names = nullptr, long serial = 1) {
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "C", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("US"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("Runnel"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    if (alt_names) {
      X509V3_CTX ctx;
      X509V3_set_ctx_nodb(&ctx);
      X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
      X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, alt_names);
      X509_add_ext(cert, ext, -1);
      X509_EXTENSION_free(ext);
    }
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
inline SslConfigLookup lookup(std::map<std::string, std::string> set) {
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

}  // namespace runnel::security::testing
