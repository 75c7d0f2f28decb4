#include "security/ssl_factory.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <boost/asio/ssl/context.hpp>
#include <fstream>
#include <string>

#include "security/ssl_test_support.h"

using namespace runnel::security;
using namespace runnel::security::testing;

namespace {

constexpr const char* kLocalhost = "DNS:localhost,IP:127.0.0.1";

long served_serial(const SslFactory& f) {
  return ASN1_INTEGER_get(X509_get_serialNumber(SSL_CTX_get0_certificate(f.context()->native_handle())));
}

// Rewrites a file in place and moves its modification time on, as a
// certificate renewal tool does.
void rewrite(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  timespec later[2];
  clock_gettime(CLOCK_REALTIME, &later[0]);
  later[0].tv_sec += 10;
  later[1] = later[0];
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), later, 0) == 0);
}

std::string refusal(const SslFactory& f, const SslConfigLookup& next) {
  try {
    f.reconfigured(next, true);
    return "";
  } catch (const SslConfigError& e) {
    return e.what();
  }
}

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a key store is rebuilt when a value changes or its file is rewritten", "[security][ssl]") {
  TestIdentity first("localhost", kLocalhost, 1), renewed("localhost", kLocalhost, 2);
  TempFile store(first.key_pem() + first.cert_pem());
  auto config = lookup({{"ssl.keystore.type", "PEM"}, {"ssl.keystore.location", store.path}});
  auto f = SslFactory::create(config, {});
  REQUIRE(served_serial(*f) == 1);
  REQUIRE(f->reconfigured(config, true) == nullptr);

  rewrite(store.path, renewed.key_pem() + renewed.cert_pem());
  // Only a per-broker update reloads a file under an unchanged name.
  REQUIRE(f->reconfigured(config, false) == nullptr);
  auto reloaded = f->reconfigured(config, true);
  REQUIRE(reloaded);
  REQUIRE(served_serial(*reloaded) == 2);
  REQUIRE(reloaded->reconfigured(config, true) == nullptr);

  TestIdentity third("localhost", kLocalhost, 3);
  TempFile other(third.key_pem() + third.cert_pem());
  auto moved = f->reconfigured(lookup({{"ssl.keystore.type", "PEM"}, {"ssl.keystore.location", other.path}}), false);
  REQUIRE(moved);
  REQUIRE(served_serial(*moved) == 3);
}

TEST_CASE("Kafka's rules for a new key store: same DN and no lost alternative name", "[security][ssl]") {
  TestIdentity current("localhost", kLocalhost, 1);
  TempFile store(current.key_pem() + current.cert_pem());
  auto f = SslFactory::create(lookup({{"ssl.keystore.type", "PEM"}, {"ssl.keystore.location", store.path}}), {});
  auto next = [](const TempFile& file, std::map<std::string, std::string> more = {}) {
    more["ssl.keystore.type"] = "PEM";
    more["ssl.keystore.location"] = file.path;
    return lookup(more);
  };

  TestIdentity other_dn("someone-else", kLocalhost, 2);
  TempFile other_dn_file(other_dn.key_pem() + other_dn.cert_pem());
  REQUIRE(mentions(refusal(*f, next(other_dn_file)), "Keystore DistinguishedName does not match"));
  REQUIRE(mentions(refusal(*f, next(other_dn_file)), "CN=someone-else"));

  TestIdentity fewer("localhost", "DNS:localhost", 3);
  TempFile fewer_file(fewer.key_pem() + fewer.cert_pem());
  REQUIRE(mentions(refusal(*f, next(fewer_file)), "Keystore SubjectAltNames do not match"));

  TestIdentity more("localhost", "DNS:localhost,IP:127.0.0.1,DNS:broker.example", 4);
  TempFile more_file(more.key_pem() + more.cert_pem());
  REQUIRE(refusal(*f, next(more_file)).empty());

  auto lenient = SslFactory::create(lookup({{"ssl.keystore.type", "PEM"}, {"ssl.keystore.location", store.path}}),
                                    {.allow_dn_changes = true, .allow_san_changes = true});
  REQUIRE(lenient->reconfigured(next(other_dn_file), true));
  REQUIRE(lenient->reconfigured(next(fewer_file), true));

  TempFile unreadable("not a key store");
  REQUIRE(mentions(refusal(*f, next(unreadable)), "no private key could be read"));

  TempFile trust(current.cert_pem());
  REQUIRE(mentions(refusal(*f, next(store, {{"ssl.truststore.type", "PEM"}, {"ssl.truststore.location", trust.path}})),
                   "Cannot add SSL truststore to an existing listener for which no truststore was configured."));
}

TEST_CASE("on the inter-broker listener new stores must complete handshakes with the old both ways",
          "[security][ssl]") {
  // Self-signed certificates, each trust store listing the ones it accepts.
  // Their subjects differ (DN changes allowed) so that a trust store never
  // holds two certificates of one name.
  TestIdentity a("broker-a", kLocalhost, 1), b("broker-b", kLocalhost, 2);
  TempFile a_store(a.key_pem() + a.cert_pem()), b_store(b.key_pem() + b.cert_pem());
  TempFile trust_a(a.cert_pem()), trust_ab(a.cert_pem() + b.cert_pem());
  auto config = [](const TempFile& store, const TempFile& trust) {
    return lookup({{"ssl.keystore.type", "PEM"},
                   {"ssl.keystore.location", store.path},
                   {"ssl.truststore.type", "PEM"},
                   {"ssl.truststore.location", trust.path}});
  };
  const SslFactory::Options inter_broker{.inter_broker = true, .allow_dn_changes = true};
  auto f = SslFactory::create(config(a_store, trust_a), inter_broker);

  // B at once: the old trust store (the other brokers') does not accept it.
  REQUIRE(mentions(refusal(*f, config(b_store, trust_a)), "TLS handshake failed"));
  REQUIRE(mentions(refusal(*f, config(b_store, trust_ab)), "TLS handshake failed"));

  // The rollover Kafka's rule asks for: trust B first, then serve it.
  auto trusting = f->reconfigured(config(a_store, trust_ab), true);
  REQUIRE(trusting);
  auto serving = trusting->reconfigured(config(b_store, trust_ab), true);
  REQUIRE(serving);
  REQUIRE(served_serial(*serving) == 2);

  // Off the inter-broker listener nothing is checked by handshake.
  auto client_facing = SslFactory::create(config(a_store, trust_a), {.allow_dn_changes = true});
  REQUIRE(client_facing->reconfigured(config(b_store, trust_a), true));
}
