// Hostile input to the message decoders: negative and huge lengths and
// counts, over-long varints. Each must fail the reader cleanly, without a
// crash, a hang or an allocation sized by the attacker.
#include <catch2/catch.hpp>

#include "protocol/messages/00_produce.h"
#include "protocol/messages/03_metadata.h"
#include "protocol/messages/18_api_versions.h"

using namespace runnel::protocol;

namespace {

template <typename Msg>
bool decodes(const Bytes& bytes, int16_t version) {
  Reader r(bytes);
  Msg m;
  m.decode(r, version);
  return r.ok();
}

}  // namespace

TEST_CASE("array counts beyond the input are refused before allocating", "[codec][hostile]") {
  // Metadata v1 request: Topics count 0x7fffffff with nothing after it.
  REQUIRE_FALSE(decodes<MetadataRequest>({0x7f, 0xff, 0xff, 0xff}, 1));
  // A negative count other than -1 (null).
  REQUIRE_FALSE(decodes<MetadataRequest>({0xff, 0xff, 0xff, 0xfe}, 1));
  // Flexible (v9): compact count 2^32-1 as a uvarint.
  REQUIRE_FALSE(decodes<MetadataRequest>({0xff, 0xff, 0xff, 0xff, 0x0f}, 9));
}

TEST_CASE("string lengths beyond the input or below -1 are refused", "[codec][hostile]") {
  // Produce v3: TransactionalId length 0x7fff, then nothing.
  REQUIRE_FALSE(decodes<ProduceRequest>({0x7f, 0xff}, 3));
  // Length -2.
  REQUIRE_FALSE(decodes<ProduceRequest>({0xff, 0xfe, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 3));
  // Flexible ApiVersions v3: ClientSoftwareName compact length 1000 with 2 bytes.
  REQUIRE_FALSE(decodes<ApiVersionsRequest>({0xe9, 0x07, 'a', 'b'}, 3));
}

TEST_CASE("records lengths beyond the input are refused", "[codec][hostile]") {
  // Produce v3: no txn id, acks 1, timeout, 1 topic "t", 1 partition 0, records length 2^31-1.
  Bytes b = {0xff, 0xff, 0, 1, 0, 0, 0x75, 0x30, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff};
  REQUIRE_FALSE(decodes<ProduceRequest>(b, 3));
  b.resize(b.size() - 4);
  b.insert(b.end(), {0, 0, 0, 0});  // an empty records field is well-formed
  REQUIRE(decodes<ProduceRequest>(b, 3));
}

TEST_CASE("over-long varints are refused", "[codec][hostile]") {
  // Six continuation bytes for a 32-bit compact length.
  REQUIRE_FALSE(decodes<ApiVersionsRequest>({0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 3));
  // A tag buffer whose count is an over-long varint.
  REQUIRE_FALSE(decodes<ApiVersionsRequest>({0x01, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}, 3));
}

TEST_CASE("tagged fields must fit in their declared size", "[codec][hostile]") {
  // ApiVersions v3 request with empty strings and one tagged field claiming 50 bytes.
  REQUIRE_FALSE(decodes<ApiVersionsRequest>({0x01, 0x01, 0x01, 0x05, 0x32, 0x00}, 3));
  // Tag count larger than the bytes left.
  REQUIRE_FALSE(decodes<ApiVersionsRequest>({0x01, 0x01, 0x7f}, 3));
}
