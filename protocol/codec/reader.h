// Bounds-checked big-endian reader for Kafka's wire primitives.
//
// The reader never trusts a length: every length is checked against the bytes
// that remain before anything is allocated. The first failure is sticky: later
// reads return zero values and do nothing, and the caller checks ok() once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/codec/types.h"

namespace runnel::protocol {

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, std::shared_ptr<const void> owner = {})
      : p_(data), end_(data + size), owner_(std::move(owner)) {}
  explicit Reader(ByteView v, std::shared_ptr<const void> owner = {})
      : Reader(v.data(), v.size(), std::move(owner)) {}

  bool ok() const { return error_ == nullptr; }
  const char* error() const { return error_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const uint8_t* position() const { return p_; }
  const std::shared_ptr<const void>& owner() const { return owner_; }

  // Marks the input malformed; only the first reason is kept.
  void fail(const char* why) {
    if (!error_) error_ = why;
    p_ = end_;
  }

  int8_t i8() { return static_cast<int8_t>(fixed<uint8_t>()); }
  int16_t i16() { return static_cast<int16_t>(fixed<uint16_t>()); }
  int32_t i32() { return static_cast<int32_t>(fixed<uint32_t>()); }
  int64_t i64() { return static_cast<int64_t>(fixed<uint64_t>()); }
  uint16_t u16() { return fixed<uint16_t>(); }
  uint32_t u32() { return fixed<uint32_t>(); }
  bool boolean() { return fixed<uint8_t>() != 0; }
  double f64() {
    uint64_t bits = fixed<uint64_t>();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  Uuid uuid() {
    Uuid u;
    if (need(16)) {
      std::memcpy(u.bytes.data(), p_, 16);
      p_ += 16;
    }
    return u;
  }

  // Unsigned LEB128 as Kafka writes it: at most 5 bytes for 32 bits.
  uint32_t uvarint() { return static_cast<uint32_t>(leb128(5)); }
  uint64_t uvarlong() { return leb128(10); }
  int32_t varint() {
    uint32_t z = uvarint();
    return static_cast<int32_t>((z >> 1) ^ -(z & 1));
  }
  int64_t varlong() {
    uint64_t z = uvarlong();
    return static_cast<int64_t>((z >> 1) ^ -(z & 1));
  }

  // Length prefixes. A return of -1 means null; any other negative value, or a
  // length past the end of the input, fails the reader.
  int64_t length_i16() { return checked_length(i16()); }
  int64_t length_i32() { return checked_length(i32()); }
  int64_t length_compact() { return checked_length(static_cast<int64_t>(uvarint()) - 1); }

  // Array counts are bounded by the remaining bytes too (every element takes
  // at least one byte), so a huge count cannot cause a huge allocation.
  int64_t count_i32() { return checked_length(i32()); }
  int64_t count_compact() { return checked_length(static_cast<int64_t>(uvarint()) - 1); }

  std::string str(int64_t len) {
    if (len <= 0) return {};
    std::string s(reinterpret_cast<const char*>(p_), static_cast<size_t>(len));
    p_ += len;
    return s;
  }
  Bytes bytes(int64_t len) {
    if (len <= 0) return {};
    Bytes b(p_, p_ + len);
    p_ += len;
    return b;
  }
  ByteView view(int64_t len) {
    if (len <= 0 || !need(static_cast<size_t>(len))) return {};
    ByteView v(p_, static_cast<size_t>(len));
    p_ += len;
    return v;
  }
  void skip(size_t n) {
    if (need(n)) p_ += n;
  }

 private:
  bool need(size_t n) {
    if (remaining() < n) {
      fail("truncated input");
      return false;
    }
    return true;
  }
  template <typename T>
  T fixed() {
    if (!need(sizeof(T))) return 0;
    T v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>((v << 8) | p_[i]);
    p_ += sizeof(T);
    return v;
  }
  uint64_t leb128(int max_bytes) {
    uint64_t v = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (!need(1)) return 0;
      uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) return v;
    }
    fail("varint too long");
    return 0;
  }
  int64_t checked_length(int64_t len) {
    if (!ok()) return -1;
    if (len < -1) {
      fail("negative length");
      return -1;
    }
    if (len > static_cast<int64_t>(remaining())) {
      fail("length past end of input");
      return -1;
    }
    return len;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  std::shared_ptr<const void> owner_;
  const char* error_ = nullptr;
};

}  // namespace runnel::protocol
