#include <catch2/catch.hpp>
#include <string>

#include "protocol/records/record.h"

using namespace runnel::protocol;
using namespace runnel::protocol::records;

namespace {

ByteView bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::optional<Record> decode(const Bytes& b, const char** error = nullptr) {
  Reader in(b.data(), b.size());
  auto r = read_record(in);
  if (error) *error = in.error();
  return r;
}

}  // namespace

TEST_CASE("a record round-trips with null, empty and present fields", "[records]") {
  std::string key = "user-42", value(300, 'v'), hv = "abc";
  Record r;
  r.timestamp_delta = -5;  // deltas may be negative: timestamps need not be ordered
  r.offset_delta = 7;
  r.key = bytes_of(key);
  r.value = bytes_of(value);
  r.headers.push_back({"trace", bytes_of(hv)});
  r.headers.push_back({"nil", std::nullopt});
  r.headers.push_back({"", ByteView()});

  Record nulls;  // null key, null value (a tombstone), no headers
  Record empties;
  empties.key = ByteView();
  empties.value = ByteView();

  for (const Record* rec : {&r, &nulls, &empties}) {
    Bytes out;
    write_record(*rec, out);
    REQUIRE(out.size() == record_size(*rec));
    auto back = decode(out);
    REQUIRE(back);
    REQUIRE(*back == *rec);
  }
  REQUIRE_FALSE(nulls == empties);  // null and empty are different things
}

TEST_CASE("a record's bytes match the format by hand", "[records]") {
  std::string value = "hi";
  Record r;
  r.value = bytes_of(value);
  Bytes out;
  write_record(r, out);
  // length 8 (zigzag 16), attributes, timestampDelta 0, offsetDelta 0,
  // key -1 (zigzag 1), value length 2 (zigzag 4), "hi", 0 headers.
  REQUIRE(out == Bytes{0x10, 0x00, 0x00, 0x00, 0x01, 0x04, 'h', 'i', 0x00});
}

TEST_CASE("decoded records point into the source bytes", "[records]") {
  Bytes b{0x10, 0x00, 0x00, 0x00, 0x01, 0x04, 'h', 'i', 0x00};
  auto r = decode(b);
  REQUIRE(r);
  REQUIRE(r->value->data() == b.data() + 6);
}

TEST_CASE("malformed records fail the reader, never crash", "[records]") {
  struct Case {
    const char* name;
    const char* why;  // part of the reader's error
    Bytes bytes;
  };
  const Case cases[] = {
      {"empty input", "truncated", {}},
      {"negative record length", "negative record length", {0x01}},
      {"record length past the end", "record length past", {0x20, 0x00, 0x00}},
      {"huge record length", "record length past", {0xFE, 0xFF, 0xFF, 0xFF, 0x0F}},
      {"varint longer than five bytes", "varint too long", {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}},
      {"negative key length", "negative record key length", {0x0C, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00}},
      {"huge key length", "record key past", {0x0E, 0x00, 0x00, 0x00, 0xFE, 0xFF, 0xFF, 0x0F}},
      {"key past the record", "record key past", {0x0C, 0x00, 0x00, 0x00, 0x08, 'a', 'b'}},
      {"negative value length", "negative record value length", {0x0A, 0x00, 0x00, 0x00, 0x01, 0x05, 0x00}},
      {"negative header count", "negative record header count", {0x0C, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01}},
      {"huge header count", "header count past",
       {0x14, 0x00, 0x00, 0x00, 0x01, 0x01, 0xFE, 0xFF, 0xFF, 0xFF, 0x0F}},
      {"null header key", "negative record header key length", {0x10, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x01, 0x01}},
      {"header value past the record", "header value past", {0x10, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x00, 0x08, 'x'}},
      {"fields end before the length", "bytes past its last header", {0x0E, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00}},
      {"varint too long inside the record", "varint too long", {0x10, 0x00, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}},
      {"header count missing", "truncated", {0x0A, 0x00, 0x00, 0x00, 0x01, 0x01}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const char* error = nullptr;
    REQUIRE_FALSE(decode(c.bytes, &error));
    REQUIRE(error != nullptr);
    REQUIRE_THAT(error, Catch::Matchers::Contains(c.why));
  }
}

TEST_CASE("a record truncated at every byte fails cleanly", "[records]") {
  std::string key = "k", value(200, 'x'), hv = "header value";
  Record r;
  r.key = bytes_of(key);
  r.value = bytes_of(value);
  r.headers.push_back({"h", bytes_of(hv)});
  Bytes full;
  write_record(r, full);
  for (size_t n = 0; n < full.size(); ++n) {
    Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    INFO("cut at " << n);
    REQUIRE_FALSE(decode(cut));
  }
}
