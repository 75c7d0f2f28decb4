// The stored form of the users' SCRAM credentials (metadata key
// "scram_credentials", cluster/etcd/key_layout.h; on a single node
// runnel-scram-credentials.json):
//   {"version":1,"users":{"alice":{"SCRAM-SHA-256":"salt=<b64>,stored_key=<b64>,
//     server_key=<b64>,iterations=8192"}, ...}}
// each credential in Kafka's ScramCredentialUtils string form, the form
// Kafka kept in ZooKeeper: what the broker checks a proof with, never a password.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "security/sasl/scram_credential.h"

namespace runnel::broker {

// user -> mechanism -> credential; a user is listed only with one credential or more.
using ScramCredentials =
    std::map<std::string, std::map<security::sasl::ScramMechanism, security::sasl::ScramCredential>>;

std::string encode_scram_credentials(const ScramCredentials& credentials);
// nullopt when the text is not a stored credential set (a damaged file or key).
std::optional<ScramCredentials> decode_scram_credentials(const std::string& text);

}  // namespace runnel::broker
