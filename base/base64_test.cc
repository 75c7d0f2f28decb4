#include "base/base64.h"

#include <catch2/catch.hpp>

using runnel::base64_decode;
using runnel::base64_encode;

TEST_CASE("base64 as etcd's gateway writes it (RFC 4648, padded)", "[base64]") {
  // RFC 4648's test vectors, and what etcd answered for "foo" and "bar".
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"}, {"bar", "YmFy"}};
  for (auto [plain, coded] : vectors) {
    REQUIRE(base64_encode(plain) == coded);
    REQUIRE(base64_decode(coded) == std::string(plain));
  }
  const std::string binary("\x00\xff\x10/runnel", 10);
  REQUIRE(base64_decode(base64_encode(binary)) == binary);
  REQUIRE_FALSE(base64_decode("Zm9"));     // not a multiple of 4
  REQUIRE_FALSE(base64_decode("Zm9v!A=="));  // not the alphabet
}

TEST_CASE("base64url as JWS writes it (RFC 4648 section 5, unpadded)", "[base64]") {
  using runnel::base64url_decode;
  REQUIRE(base64url_decode("eyJhbGciOiJub25lIn0") == std::string(R"({"alg":"none"})"));
  REQUIRE(base64url_decode("_-8") == std::string("\xff\xef"));
  REQUIRE(base64url_decode("Zm8=") == std::string("fo"));  // padding tolerated
  REQUIRE(base64url_decode("") == std::string());
  REQUIRE_FALSE(base64url_decode("/+8"));    // the standard alphabet's 62 and 63
  REQUIRE_FALSE(base64url_decode("Zm9vY"));  // one character over a group
  REQUIRE_FALSE(base64url_decode("Zm.v"));
}
