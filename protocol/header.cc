#include "protocol/header.h"

#include "protocol/codec/fields.h"

namespace runnel::protocol {

namespace {

void put_tag_buffer(Writer& w, const std::vector<RawTaggedField>& tags) {
  w.uvarint(static_cast<uint32_t>(tags.size()));
  for (const auto& t : tags) put_raw_tag(w, t);
}

void get_tag_buffer(Reader& r, std::vector<RawTaggedField>& tags) {
  uint32_t n = r.uvarint();
  if (n > r.remaining()) return r.fail("tag count past end of input");
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    uint32_t tag = r.uvarint();
    uint32_t size = r.uvarint();
    if (size > r.remaining()) return r.fail("tagged field past end of input");
    tags.push_back({tag, r.bytes(size)});
  }
}

}  // namespace

void RequestHeader::encode(Writer& w, int16_t v) const {
  w.i16(api_key);
  w.i16(api_version);
  w.i32(correlation_id);
  if (v >= 1) put_nullable_string(w, client_id, false);  // never compact
  if (v >= 2) put_tag_buffer(w, unknown_tagged_fields);
}

void RequestHeader::decode(Reader& r, int16_t v) {
  *this = RequestHeader();
  api_key = r.i16();
  api_version = r.i16();
  correlation_id = r.i32();
  if (v >= 1) client_id = get_nullable_string(r, false);
  if (v >= 2) get_tag_buffer(r, unknown_tagged_fields);
}

void ResponseHeader::encode(Writer& w, int16_t v) const {
  w.i32(correlation_id);
  if (v >= 1) put_tag_buffer(w, unknown_tagged_fields);
}

void ResponseHeader::decode(Reader& r, int16_t v) {
  *this = ResponseHeader();
  correlation_id = r.i32();
  if (v >= 1) get_tag_buffer(r, unknown_tagged_fields);
}

std::optional<HeaderPeek> peek_header(ByteView frame) {
  Reader r(frame);
  HeaderPeek p{r.i16(), r.i16()};
  if (!r.ok()) return std::nullopt;
  return p;
}

}  // namespace runnel::protocol
