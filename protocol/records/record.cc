#include "protocol/records/record.h"

#include <algorithm>
#include <cstring>

#include "protocol/codec/writer.h"

namespace runnel::protocol::records {

namespace {

bool same_bytes(const std::optional<ByteView>& a, const std::optional<ByteView>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return std::equal(a->begin(), a->end(), b->begin(), b->end());
}

template <typename W>
void put_nullable(W& w, const std::optional<ByteView>& bytes) {
  if (!bytes) {
    w.varint(-1);
    return;
  }
  w.varint(static_cast<int32_t>(bytes->size()));
  w.raw(*bytes);
}

// Everything after the length prefix; templated so one encoder both writes
// and counts.
template <typename W>
void put_body(W& w, const Record& r) {
  w.i8(r.attributes);
  w.varlong(r.timestamp_delta);
  w.varint(r.offset_delta);
  put_nullable(w, r.key);
  put_nullable(w, r.value);
  w.varint(static_cast<int32_t>(r.headers.size()));
  for (const auto& h : r.headers) {
    w.varint(static_cast<int32_t>(h.key.size()));
    w.raw(h.key.data(), h.key.size());
    put_nullable(w, h.value);
  }
}

size_t body_size(const Record& r) {
  SizeCounter c;
  put_body(c, r);
  return c.size();
}

// A varint length: -1 is null, anything else must be a length that fits.
std::optional<ByteView> get_nullable(Reader& in, const char* negative, const char* too_long) {
  int32_t len = in.varint();
  if (!in.ok() || len == -1) return std::nullopt;
  if (len < -1) {
    in.fail(negative);
    return std::nullopt;
  }
  if (static_cast<size_t>(len) > in.remaining()) {
    in.fail(too_long);
    return std::nullopt;
  }
  return in.view(len);
}

}  // namespace

bool operator==(const RecordHeader& a, const RecordHeader& b) {
  return a.key == b.key && same_bytes(a.value, b.value);
}

bool operator==(const Record& a, const Record& b) {
  return a.attributes == b.attributes && a.timestamp_delta == b.timestamp_delta &&
         a.offset_delta == b.offset_delta && same_bytes(a.key, b.key) && same_bytes(a.value, b.value) &&
         a.headers == b.headers;
}

size_t record_size(const Record& record) {
  size_t body = body_size(record);
  SizeCounter c;
  c.varint(static_cast<int32_t>(body));
  return c.size() + body;
}

void write_record(const Record& record, Bytes& out) {
  Writer w(out);
  w.varint(static_cast<int32_t>(body_size(record)));
  put_body(w, record);
}

std::optional<Record> read_record(Reader& in) {
  int32_t length = in.varint();
  if (!in.ok()) return std::nullopt;
  if (length < 0) {
    in.fail("negative record length");
    return std::nullopt;
  }
  if (static_cast<size_t>(length) > in.remaining()) {
    in.fail("record length past the end of the records");
    return std::nullopt;
  }
  // Parse the body on its own reader so no field can run past the length.
  Reader body(in.position(), static_cast<size_t>(length));
  in.skip(static_cast<size_t>(length));

  Record r;
  r.attributes = body.i8();
  r.timestamp_delta = body.varlong();
  r.offset_delta = body.varint();
  r.key = get_nullable(body, "negative record key length", "record key past the end of the record");
  r.value = get_nullable(body, "negative record value length", "record value past the end of the record");
  int32_t header_count = body.varint();
  if (body.ok() && header_count < 0) body.fail("negative record header count");
  // Each header takes at least two bytes, which bounds the allocation.
  if (body.ok() && static_cast<size_t>(header_count) > body.remaining() / 2)
    body.fail("record header count past the end of the record");
  if (body.ok()) r.headers.reserve(static_cast<size_t>(header_count));
  for (int32_t i = 0; body.ok() && i < header_count; ++i) {
    RecordHeader h;
    int32_t key_len = body.varint();
    if (body.ok() && key_len < 0) body.fail("negative record header key length");
    if (body.ok() && static_cast<size_t>(key_len) > body.remaining())
      body.fail("record header key past the end of the record");
    ByteView key = body.view(key_len);
    h.key = std::string_view(reinterpret_cast<const char*>(key.data()), key.size());
    h.value = get_nullable(body, "negative record header value length",
                           "record header value past the end of the record");
    r.headers.push_back(h);
  }
  if (body.ok() && body.remaining() != 0) body.fail("record has bytes past its last header");
  if (!body.ok()) {
    in.fail(body.error());
    return std::nullopt;
  }
  return r;
}

}  // namespace runnel::protocol::records
