// Encoders and decoders for the variable-length field types, shared by every
// generated message. `flexible` selects the compact (uvarint N+1) forms of
// KIP-482; otherwise strings carry an int16 length, bytes and arrays int32.
#pragma once

#include <optional>
#include <string>

#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"

namespace runnel::protocol {

template <typename W>
void put_length(W& w, size_t n, bool flexible) {
  if (flexible)
    w.uvarint(static_cast<uint32_t>(n + 1));
  else
    w.i32(static_cast<int32_t>(n));
}
template <typename W>
void put_null_length(W& w, bool flexible) {
  if (flexible)
    w.uvarint(0);
  else
    w.i32(-1);
}

template <typename W>
void put_string(W& w, const std::string& s, bool flexible) {
  if (flexible)
    w.uvarint(static_cast<uint32_t>(s.size() + 1));
  else
    w.i16(static_cast<int16_t>(s.size()));
  w.raw(s.data(), s.size());
}
template <typename W>
void put_nullable_string(W& w, const std::optional<std::string>& s, bool flexible) {
  if (s)
    put_string(w, *s, flexible);
  else if (flexible)
    w.uvarint(0);
  else
    w.i16(-1);
}

template <typename W>
void put_bytes(W& w, const Bytes& b, bool flexible) {
  put_length(w, b.size(), flexible);
  w.raw(b.data(), b.size());
}
template <typename W>
void put_nullable_bytes(W& w, const std::optional<Bytes>& b, bool flexible) {
  if (b)
    put_bytes(w, *b, flexible);
  else
    put_null_length(w, flexible);
}

template <typename W>
void put_records(W& w, const Records& r, bool flexible) {
  if (r.is_null()) return put_null_length(w, flexible);
  put_length(w, r.size(), flexible);
  w.records_body(r);
}

inline int64_t get_string_length(Reader& r, bool flexible) {
  return flexible ? r.length_compact() : r.length_i16();
}
inline int64_t get_length(Reader& r, bool flexible) {
  return flexible ? r.length_compact() : r.length_i32();
}
inline int64_t get_count(Reader& r, bool flexible) {
  return flexible ? r.count_compact() : r.count_i32();
}

inline std::string get_string(Reader& r, bool flexible) {
  int64_t n = get_string_length(r, flexible);
  if (n < 0) r.fail("null in a non-nullable string");
  return r.str(n);
}
inline std::optional<std::string> get_nullable_string(Reader& r, bool flexible) {
  int64_t n = get_string_length(r, flexible);
  if (n < 0) return std::nullopt;
  return r.str(n);
}
inline Bytes get_bytes(Reader& r, bool flexible) {
  int64_t n = get_length(r, flexible);
  if (n < 0) r.fail("null in a non-nullable bytes field");
  return r.bytes(n);
}
inline std::optional<Bytes> get_nullable_bytes(Reader& r, bool flexible) {
  int64_t n = get_length(r, flexible);
  if (n < 0) return std::nullopt;
  return r.bytes(n);
}
inline Records get_records(Reader& r, bool flexible) {
  int64_t n = get_length(r, flexible);
  if (n < 0) return Records();
  return Records::view(r.view(n), r.owner());
}

// Fixed-size elements must all fit in what remains, checked before reserving.
inline bool fits(Reader& r, int64_t count, size_t element_size) {
  if (count > 0 && static_cast<uint64_t>(count) * element_size > r.remaining()) {
    r.fail("array past end of input");
    return false;
  }
  return true;
}

// Reads the body of one tagged field (the next `size` bytes) with `read`,
// which must consume exactly those bytes.
template <typename F>
void get_tagged(Reader& r, uint32_t size, F&& read) {
  if (size > r.remaining()) return r.fail("tagged field past end of input");
  Reader sub(r.position(), size, r.owner());
  read(sub);
  if (!sub.ok() || sub.remaining() != 0) return r.fail("malformed tagged field");
  r.skip(size);
}

template <typename W>
void put_raw_tag(W& w, const RawTaggedField& t) {
  w.uvarint(t.tag);
  w.uvarint(static_cast<uint32_t>(t.data.size()));
  w.raw(t.data.data(), t.data.size());
}

// Writes one known tagged field: tag, size, then the value written by `put`.
template <typename W, typename F>
void put_tagged(W& w, uint32_t tag, F&& put) {
  SizeCounter sc;
  put(sc);
  w.uvarint(tag);
  w.uvarint(static_cast<uint32_t>(sc.size()));
  put(w);
}

}  // namespace runnel::protocol
