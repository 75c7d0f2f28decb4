// The framing of a coordinator record in its internal topic (Kafka's
// CoordinatorRecordSerde): the record key is the record type as an int16,
// then the key's fields at its version 0; the value is its version as an
// int16, then its fields; a null value is a tombstone. The types and their
// fields are generated from protocol/schema/coordinator/.
#pragma once

#include <cstdint>
#include <optional>

#include "protocol/codec/reader.h"
#include "protocol/codec/types.h"
#include "protocol/codec/writer.h"

namespace runnel::protocol {

template <typename Rec>
Bytes record_key(const typename Rec::Key& key) {
  Bytes out;
  Writer w(out);
  w.i16(Rec::type);
  key.encode(w, Rec::key_version);
  return out;
}

template <typename Rec>
Bytes record_value(const typename Rec::Value& value, int16_t version = Rec::value_max_version) {
  Bytes out;
  Writer w(out);
  w.i16(version);
  value.encode(w, version);
  return out;
}

// The record type a key starts with; nullopt for a key under two bytes.
inline std::optional<int16_t> record_type(ByteView key) {
  Reader r(key);
  int16_t type = r.i16();
  if (!r.ok()) return std::nullopt;
  return type;
}

// The key, if `key` is one of Rec's, whole and with nothing after it.
template <typename Rec>
std::optional<typename Rec::Key> decode_record_key(ByteView key) {
  Reader r(key);
  if (r.i16() != Rec::type || !r.ok()) return std::nullopt;
  typename Rec::Key k;
  k.decode(r, Rec::key_version);
  if (!r.ok() || r.remaining() != 0) return std::nullopt;
  return k;
}

// The value, if it is whole at a version this codec knows. Kafka's loader
// fails on a version it does not know; the caller decides what that means.
template <typename Rec>
std::optional<typename Rec::Value> decode_record_value(ByteView value) {
  Reader r(value);
  int16_t version = r.i16();
  if (!r.ok() || version < Rec::value_min_version || version > Rec::value_max_version) return std::nullopt;
  typename Rec::Value v;
  v.decode(r, version);
  if (!r.ok() || r.remaining() != 0) return std::nullopt;
  return v;
}

}  // namespace runnel::protocol
