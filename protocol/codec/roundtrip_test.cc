// Round trip of every API, request and response, at every version the
// registry names. Generated from the same list the broker dispatches on, so a
// new schema is tested at all its versions the moment it exists.
#include <catch2/catch.hpp>

#include "protocol/messages/all_apis.h"

using namespace runnel::protocol;

namespace {

template <typename Msg>
Bytes encode(const Msg& m, int16_t version) {
  Bytes out;
  Writer w(out);
  m.encode(w, version);
  return out;
}

template <typename Msg>
void check_round_trip(int16_t version, uint64_t seed, bool truncations) {
  Randomizer rnd(seed);
  Msg original;
  original.randomize(rnd, version);
  Bytes bytes = encode(original, version);
  REQUIRE(original.size(version) == bytes.size());

  Reader r(bytes);
  Msg decoded;
  decoded.decode(r, version);
  INFO("version " << version << " seed " << seed << " error " << (r.error() ? r.error() : "none"));
  REQUIRE(r.ok());
  REQUIRE(r.remaining() == 0);
  REQUIRE(decoded == original);
  REQUIRE(encode(decoded, version) == bytes);

  if (!truncations) return;
  // Every strict prefix is malformed: decoding must fail, and never crash.
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    Reader t(bytes.data(), cut);
    Msg partial;
    partial.decode(t, version);
    INFO("cut at " << cut << " of " << bytes.size());
    REQUIRE(!t.ok());
  }
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("every version round-trips byte for byte", "[codec]", AllApis) {
  using Api = TestType;
  for (int16_t v = Api::min_version; v <= Api::max_version; ++v) {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      bool truncations = seed <= 3;
      check_round_trip<typename Api::Request>(v, seed * 7919 + v, truncations);
      check_round_trip<typename Api::Response>(v, seed * 104729 + v, truncations);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("flexible versions are exactly the schema's", "[codec]", AllApis) {
  using Api = TestType;
  // An empty request at the first flexible version ends in a tag buffer; the
  // version before it does not. Checks that the generator wires flexibility
  // from the api line into every struct.
  if (Api::flexible_from > Api::max_version) return;
  typename Api::Request req;
  Bytes flex = encode(req, Api::flexible_from);
  REQUIRE(!flex.empty());
  REQUIRE(flex.back() == 0);  // no tagged fields
}
