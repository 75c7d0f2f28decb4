// Random field values for the generated round-trip tests. Deterministic for a
// seed, so a failing case can be replayed.
#pragma once

#include <optional>
#include <random>
#include <string>

#include "protocol/codec/types.h"

namespace runnel::protocol {

class Randomizer {
 public:
  explicit Randomizer(uint64_t seed) : rng_(seed) {}

  bool coin() { return pick(0, 1) == 1; }
  int8_t i8() { return static_cast<int8_t>(bits()); }
  int16_t i16() { return static_cast<int16_t>(bits()); }
  int32_t i32() { return static_cast<int32_t>(bits()); }
  int64_t i64() { return static_cast<int64_t>(bits()); }
  uint16_t u16() { return static_cast<uint16_t>(bits()); }
  uint32_t u32() { return static_cast<uint32_t>(bits()); }
  double f64() { return std::uniform_real_distribution<double>(-1e9, 1e9)(rng_); }
  Uuid uuid() {
    Uuid u;
    for (auto& b : u.bytes) b = static_cast<uint8_t>(bits());
    return u;
  }
  std::string str() {
    std::string s(static_cast<size_t>(pick(0, 12)), 'a');
    for (auto& c : s) c = static_cast<char>('a' + pick(0, 25));
    return s;
  }
  Bytes bytes() {
    Bytes b(static_cast<size_t>(pick(0, 40)));
    for (auto& x : b) x = static_cast<uint8_t>(bits());
    return b;
  }
  Records records() {
    if (pick(0, 4) == 0) return Records();
    return Records::copy_of(bytes());
  }
  // Elements in a random array; kept small and shrinking with depth so
  // nested messages stay a reasonable size.
  size_t count() { return static_cast<size_t>(pick(0, depth_ > 2 ? 1 : 3)); }
  // Unknown tagged fields to attach to a flexible struct, tags above `after`.
  std::vector<RawTaggedField> unknown_tags(uint32_t after) {
    std::vector<RawTaggedField> tags;
    if (pick(0, 3) != 0) return tags;
    uint32_t tag = after + 1 + static_cast<uint32_t>(pick(0, 300));
    tags.push_back({tag, bytes()});
    return tags;
  }
  struct Nest {
    Randomizer& r;
    explicit Nest(Randomizer& r) : r(r) { ++r.depth_; }
    ~Nest() { --r.depth_; }
  };

 private:
  uint64_t bits() {
    // Mix edge values in: they are where length and sign bugs live.
    switch (pick(0, 7)) {
      case 0: return 0;
      case 1: return ~uint64_t{0};
      case 2: return static_cast<uint64_t>(pick(0, 300));
      default: return rng_();
    }
  }
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::mt19937_64 rng_;
  int depth_ = 0;
};

}  // namespace runnel::protocol
