// The stored form of the SCRAM credentials: what is encoded decodes back,
// and anything else (a damaged file or key) is refused rather than read as
// fewer users.
#include <catch2/catch.hpp>

#include "broker/scram_credentials_codec.h"

using namespace runnel::broker;
using runnel::security::sasl::ScramMechanism;
namespace sasl = runnel::security::sasl;

TEST_CASE("stored SCRAM credentials decode back to what was encoded", "[scram]") {
  const sasl::Bytes salt{1, 2, 3, 4};
  const auto salted = sasl::scram_salted_password(ScramMechanism::sha512, "pw", salt, 4096);
  ScramCredentials credentials;
  credentials["alice"][ScramMechanism::sha256] =
      sasl::scram_credential(ScramMechanism::sha256, sasl::scram_salted_password(ScramMechanism::sha256, "pw", salt, 8192),
                             salt, 8192);
  credentials["alice"][ScramMechanism::sha512] = sasl::scram_credential(ScramMechanism::sha512, salted, salt, 4096);
  credentials["b\"ob,="][ScramMechanism::sha512] = sasl::scram_credential(ScramMechanism::sha512, salted, salt, 4096);
  const std::string text = encode_scram_credentials(credentials);
  CHECK(decode_scram_credentials(text) == credentials);
  CHECK(text.find("\"SCRAM-SHA-256\":\"salt=" + std::string("AQIDBA==")) != std::string::npos);
  CHECK(decode_scram_credentials(encode_scram_credentials({})) == ScramCredentials{});
}

TEST_CASE("stored SCRAM credentials that do not decode are refused", "[scram]") {
  const std::string good = "salt=AQID,stored_key=AQID,server_key=AQID,iterations=4096";
  REQUIRE(decode_scram_credentials(R"({"version":1,"users":{"a":{"SCRAM-SHA-256":")" + good + "\"}}}"));
  for (const std::string& bad : {
           std::string("not json"),
           std::string("[]"),
           std::string(R"({"version":1})"),
           std::string(R"({"version":1,"users":[]})"),
           std::string(R"({"version":1,"users":{"a":{}}})"),
           std::string(R"({"version":1,"users":{"a":{"SCRAM-SHA-1":")" + good + "\"}}}"),
           std::string(R"({"version":1,"users":{"a":{"SCRAM-SHA-256":42}}})"),
           std::string(R"({"version":1,"users":{"a":{"SCRAM-SHA-256":"salt=AQID,iterations=4096"}}})"),
       })
    CHECK_FALSE(decode_scram_credentials(bad).has_value());
}
