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
#include "security/ssl_test_support.h"
#include "security/transport_layer.h"

using namespace runnel::security;
using namespace runnel::security::testing;

namespace {

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
