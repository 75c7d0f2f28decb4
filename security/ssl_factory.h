// Kafka's SslFactory in server mode: a listener's TLS context together with
// what it was built from, so that a dynamic update of the listener's key
// store or trust store (KIP-226: AlterConfigs on BROKER "<id>" with
// listener.name.<listener>.ssl.keystore.location and friends) can tell
//   - whether the context must be rebuilt: a reconfigurable value changed,
//     or a store file it names was modified in place (Kafka reloads a file
//     whose modification time moved when the same path is set again);
//   - whether the new context may replace it, by Kafka's rules: a key store
//     cannot be added or removed, nor a trust store added; the certificate's
//     subject DN must stay the same and its subject alternative names must
//     keep every old one (unless ssl.allow.dn.changes /
//     ssl.allow.san.changes); and on the inter-broker listener the old and
//     the new stores must complete a TLS handshake with each other both
//     ways, so that no broker rolls in a certificate its peers refuse.
// Connections already open keep the context they were accepted with, as in
// Kafka; the next accepted one gets the new context.
#pragma once

#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "security/ssl_engine_factory.h"

namespace runnel::security {

// Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: the ssl.* keys a listener's TLS
// takes at runtime.
const std::vector<std::string>& reconfigurable_ssl_configs();

// A key store certificate as Kafka's CertificateEntries compares it.
struct CertificateEntry {
  std::string subject;                     // RFC 2253
  std::set<std::string> subject_alt_names; // "DNS:host", "IP Address:127.0.0.1", ...
};

class SslFactory {
 public:
  struct Options {
    bool inter_broker = false;       // validate a new store by handshakes
    bool allow_dn_changes = false;   // ssl.allow.dn.changes
    bool allow_san_changes = false;  // ssl.allow.san.changes
  };

  // Throws SslConfigError, as create_server_ssl_context does.
  static std::shared_ptr<const SslFactory> create(const SslConfigLookup& config, Options options);

  const std::shared_ptr<boost::asio::ssl::context>& context() const { return context_; }

  // Kafka's validateReconfiguration and reconfigure: nullptr when nothing
  // needs rebuilding, else the factory the new configs make. With
  // `reload_modified` a store file modified in place counts as a change
  // (Kafka reloads files on a per-broker update). Throws SslConfigError
  // saying why the new stores may not replace these.
  std::shared_ptr<const SslFactory> reconfigured(const SslConfigLookup& next, bool reload_modified) const;

 private:
  struct FileStamp {
    std::string path;
    timespec modified{};
    bool operator==(const FileStamp& o) const;
  };

  static std::vector<FileStamp> stamps(const std::map<std::string, std::optional<std::string>>& values);

  std::map<std::string, std::optional<std::string>> values_;  // reconfigurable keys as built
  std::vector<FileStamp> files_;                               // the store files they name
  std::shared_ptr<boost::asio::ssl::context> context_;
  std::shared_ptr<boost::asio::ssl::context> client_;  // the same stores as a client (inter-broker only)
  std::vector<CertificateEntry> entries_;
  bool has_truststore_ = false;
  Options options_;
};

// The key store certificates a context serves (the leaf of its chain).
std::vector<CertificateEntry> certificate_entries(boost::asio::ssl::context& context);

// Kafka's SslEngineValidator: a TLS handshake in memory between `server`
// and `client` (no host name check). Throws SslConfigError with OpenSSL's
// reason when it fails.
void validate_handshake(boost::asio::ssl::context& server, boost::asio::ssl::context& client);

}  // namespace runnel::security
