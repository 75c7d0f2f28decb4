#include "cli/record_format.h"

#include <catch2/catch.hpp>

#include "cli/kafka_errors.h"

using namespace runnel::cli;

namespace {
ConsumedRecord sample() {
  ConsumedRecord r;
  r.topic = "orders";
  r.partition = 2;
  r.offset = 41;
  r.timestamp_ms = 1700000000123;
  r.key = "k1";
  r.value = "hello";
  r.headers = {{"a", "1"}, {"b", std::nullopt}};
  return r;
}
std::string fmt(const char* spec, const ConsumedRecord& r) {
  std::string out;
  RecordFormat(spec).format(r, out);
  return out;
}
}  // namespace

TEST_CASE("every kcat token prints its field") {
  auto r = sample();
  CHECK(fmt("%t [%p] @%o: %k=%s (%K/%S) %T %h\\n", r) == "orders [2] @41: k1=hello (2/5) 1700000000123 a=1,b=\n");
  CHECK(fmt("100%%", r) == "100%");
  CHECK(fmt("\\t|\\r|\\\\|\\x41\\x7e", r) == "\t|\r|\\|A~");
}

TEST_CASE("%R is the value length as a big-endian int32, -1 for null") {
  auto r = sample();
  CHECK(fmt("%R", r) == std::string("\0\0\0\5", 4));
  r.value = std::nullopt;
  CHECK(fmt("%R", r) == std::string("\xff\xff\xff\xff", 4));
}

TEST_CASE("a null key or value prints nothing, its length -1") {
  auto r = sample();
  r.key = std::nullopt;
  r.value = std::nullopt;
  r.headers.clear();
  CHECK(fmt("[%k][%s][%K][%S][%h]", r) == "[][][-1][-1][]");
  r.value = "";
  CHECK(fmt("[%s][%S]", r) == "[][0]");
}

TEST_CASE("unknown tokens and escapes are usage errors") {
  CHECK_THROWS_AS(RecordFormat("%q"), UsageError);
  CHECK_THROWS_AS(RecordFormat("abc%"), UsageError);
  CHECK_THROWS_AS(RecordFormat("\\z"), UsageError);
  CHECK_THROWS_AS(RecordFormat("\\xg"), UsageError);
}
