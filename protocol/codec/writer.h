// Big-endian writers for Kafka's wire primitives.
//
// Generated encoders are templates over the writer, so one encoder serves two
// writers: Writer, which produces bytes, and SizeCounter, which only counts
// them (that is how size() and tagged-field lengths are computed).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "protocol/codec/types.h"

namespace runnel::protocol {

namespace detail {
template <typename W>
void put_uvarlong(W& w, uint64_t v) {
  while (v >= 0x80) {
    w.u8(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  w.u8(static_cast<uint8_t>(v));
}
}  // namespace detail

// Writes into a byte vector. `records` given as a file region are not copied:
// their place in the output is remembered so the connection can send the
// memory around them with writev and the region itself with sendfile.
class Writer {
 public:
  struct Splice {
    size_t at;  // byte offset in buffer() where the region belongs
    FileRegion region;
  };

  explicit Writer(Bytes& out) : buf_(out) {}

  void u8(uint8_t v) { buf_.push_back(v); }
  void i8(int8_t v) { u8(static_cast<uint8_t>(v)); }
  void i16(int16_t v) { fixed(static_cast<uint16_t>(v)); }
  void i32(int32_t v) { fixed(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { fixed(static_cast<uint64_t>(v)); }
  void u16(uint16_t v) { fixed(v); }
  void u32(uint32_t v) { fixed(v); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void f64(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    fixed(bits);
  }
  void uuid(const Uuid& u) { raw(u.bytes.data(), u.bytes.size()); }
  void uvarint(uint32_t v) { detail::put_uvarlong(*this, v); }
  void uvarlong(uint64_t v) { detail::put_uvarlong(*this, v); }
  void varint(int32_t v) { uvarint((static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31)); }
  void varlong(int64_t v) { uvarlong((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void raw(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  void raw(ByteView v) { raw(v.data(), v.size()); }
  void records_body(const Records& r) {
    if (r.is_file())
      splices_.push_back({buf_.size(), r.region()});
    else
      raw(r.bytes());
  }

  size_t size() const { return buf_.size(); }
  Bytes& buffer() { return buf_; }
  const std::vector<Splice>& splices() const { return splices_; }

 private:
  template <typename T>
  void fixed(T v) {
    uint8_t b[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<uint8_t>(v >> (8 * (sizeof(T) - 1 - i)));
    raw(b, sizeof b);
  }

  Bytes& buf_;
  std::vector<Splice> splices_;
};

// Counts the bytes an encoder would write, writing nothing.
class SizeCounter {
 public:
  void u8(uint8_t) { n_ += 1; }
  void i8(int8_t) { n_ += 1; }
  void i16(int16_t) { n_ += 2; }
  void i32(int32_t) { n_ += 4; }
  void i64(int64_t) { n_ += 8; }
  void u16(uint16_t) { n_ += 2; }
  void u32(uint32_t) { n_ += 4; }
  void boolean(bool) { n_ += 1; }
  void f64(double) { n_ += 8; }
  void uuid(const Uuid&) { n_ += 16; }
  void uvarint(uint32_t v) { n_ += uvarlong_size(v); }
  void uvarlong(uint64_t v) { n_ += uvarlong_size(v); }
  void varint(int32_t v) { uvarint((static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31)); }
  void varlong(int64_t v) { uvarlong((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void raw(const void*, size_t n) { n_ += n; }
  void raw(ByteView v) { n_ += v.size(); }
  void records_body(const Records& r) { n_ += r.size(); }

  size_t size() const { return n_; }

  static size_t uvarlong_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
      v >>= 7;
      ++n;
    }
    return n;
  }

 private:
  size_t n_ = 0;
};

}  // namespace runnel::protocol
