// Kafka's PlainSaslClient: one token, NUL username NUL password (no
// authorization id), and nothing to check in return.
#include "security/sasl/sasl_client.h"
#include "security/sasl/sasl_server.h"
#include "security/sasl/scram_sasl_client.h"

namespace runnel::security::sasl {

namespace {

class PlainSaslClient : public SaslClient {
 public:
  PlainSaslClient(std::string username, std::string password)
      : username_(std::move(username)), password_(std::move(password)) {}

  const char* mechanism() const override { return kPlain; }
  Bytes initial_response() override {
    Bytes out;
    out.push_back(0);
    out.insert(out.end(), username_.begin(), username_.end());
    out.push_back(0);
    out.insert(out.end(), password_.begin(), password_.end());
    complete_ = true;
    return out;
  }
  // PLAIN's server answers only with success or failure, never a
  // challenge: its empty success answer is accepted, anything else is not.
  std::optional<Bytes> evaluate_challenge(std::span<const uint8_t> challenge) override {
    if (!complete_ || !challenge.empty()) return std::nullopt;
    return Bytes{};
  }
  bool complete() const override { return complete_; }

 private:
  std::string username_;
  std::string password_;
  bool complete_ = false;
};

}  // namespace

std::unique_ptr<SaslClient> create_sasl_client(const std::string& mechanism, const std::string& username,
                                               const std::string& password) {
  if (mechanism == kPlain) return std::make_unique<PlainSaslClient>(username, password);
  if (auto scram = scram_mechanism_from_name(mechanism); scram != ScramMechanism::unknown)
    return std::make_unique<ScramSaslClient>(scram, username, password);
  return nullptr;
}

}  // namespace runnel::security::sasl
