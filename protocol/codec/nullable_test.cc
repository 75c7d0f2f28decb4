// Nullability is per version: null is refused where Kafka's schema does not
// allow it, even when a later version of the same field is nullable.
#include <catch2/catch.hpp>

#include "protocol/messages/03_metadata.h"

using namespace runnel::protocol;

TEST_CASE("null array refused in a version where the field is not nullable", "[codec]") {
  // Metadata v0 Topics: a plain array (null only from v1).
  const uint8_t null_array[] = {0xff, 0xff, 0xff, 0xff};
  Reader v0(null_array, sizeof null_array);
  MetadataRequest req;
  req.decode(v0, 0);
  REQUIRE_FALSE(v0.ok());

  Reader v1(null_array, sizeof null_array);
  req.decode(v1, 1);
  REQUIRE(v1.ok());
  REQUIRE_FALSE(req.topics.has_value());
}

TEST_CASE("null string refused in a version where the field is not nullable", "[codec]") {
  // A Metadata request topic at v9 (flexible, name not yet nullable): a
  // compact null name (0) then an empty tag buffer.
  const uint8_t null_name[] = {0, 0};
  MetadataRequest::MetadataRequestTopic t;
  Reader v9(null_name, sizeof null_name);
  t.decode(v9, 9);
  REQUIRE_FALSE(v9.ok());
}
