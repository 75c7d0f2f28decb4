#include "broker/admin/rest/iso8601.h"

#include <catch2/catch.hpp>

namespace runnel::broker::admin::rest {
namespace {

TEST_CASE("instants print as java's ISO_INSTANT prints whole milliseconds", "[rest]") {
  CHECK(format_instant(0) == "1970-01-01T00:00:00Z");
  CHECK(format_instant(1'612'552'482'821) == "2021-02-05T19:14:42.821Z");
  CHECK(format_instant(1'612'552'482'000) == "2021-02-05T19:14:42Z");
  CHECK(format_instant(1'612'552'482'050) == "2021-02-05T19:14:42.050Z");
  CHECK(format_instant(951'782'400'000) == "2000-02-29T00:00:00Z");
  CHECK(format_instant(-1) == "1969-12-31T23:59:59.999Z");
}

TEST_CASE("instants parse with fractions and zone offsets, and bad ones are refused", "[rest]") {
  CHECK(parse_instant("2021-02-05T19:14:42.821Z") == 1'612'552'482'821);
  CHECK(parse_instant("2021-02-05T19:14:42Z") == 1'612'552'482'000);
  CHECK(parse_instant("2021-02-05T19:14:42.8Z") == 1'612'552'482'800);
  CHECK(parse_instant("2021-02-05T19:14:42.821999Z") == 1'612'552'482'821);
  CHECK(parse_instant("2021-02-05T20:14:42.821+01:00") == 1'612'552'482'821);
  CHECK(parse_instant("2021-02-05T18:44:42.821-00:30") == 1'612'552'482'821);
  CHECK(parse_instant("2000-02-29T00:00:00Z") == 951'782'400'000);
  CHECK_FALSE(parse_instant("2021-02-29T00:00:00Z"));  // not a leap year
  CHECK_FALSE(parse_instant("2021-02-05 19:14:42Z"));
  CHECK_FALSE(parse_instant("2021-02-05T19:14:42"));   // no zone
  CHECK_FALSE(parse_instant("2021-02-05T24:00:00Z"));
  CHECK_FALSE(parse_instant("2021-02-05T19:14:42.Z"));
  CHECK_FALSE(parse_instant("2021-02-05T19:14:42Zjunk"));
  CHECK_FALSE(parse_instant("1612552482821"));
}

}  // namespace
}  // namespace runnel::broker::admin::rest
