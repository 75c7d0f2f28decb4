#include "broker/admin/rest/base64.h"

#include <catch2/catch.hpp>

namespace runnel::broker::admin::rest {
namespace {

TEST_CASE("base64 round-trips every length and byte, padded as RFC 4648", "[rest]") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (size_t n = 0; n <= all.size(); n += 7) {
    const std::string part = all.substr(0, n);
    CHECK(base64_decode(base64_encode(part)) == part);
  }
}

TEST_CASE("base64 decoding takes missing padding and refuses what is not base64", "[rest]") {
  CHECK(base64_decode("Zg") == "f");
  CHECK(base64_decode("Zm8") == "fo");
  CHECK(base64_decode("Zm9vYg==") == "foob");
  CHECK_FALSE(base64_decode("Zm9v!"));
  CHECK_FALSE(base64_decode("Zm9 v"));
  CHECK_FALSE(base64_decode("Z"));        // six bits make no byte
  CHECK_FALSE(base64_decode("Zg="));      // padding that completes no quantum
  CHECK_FALSE(base64_decode("Z=g="));     // padding inside
  CHECK_FALSE(base64_decode("Zm9v-_"));   // the URL-safe alphabet is another one
}

}  // namespace
}  // namespace runnel::broker::admin::rest
