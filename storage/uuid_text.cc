#include "storage/uuid_text.h"

#include <random>

namespace runnel::storage {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}
}  // namespace

std::string uuid_to_base64(const protocol::Uuid& id) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t b : id.bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 63]);
  return out;
}

std::optional<protocol::Uuid> uuid_from_base64(std::string_view text) {
  if (text.size() != 22) return std::nullopt;
  protocol::Uuid id;
  uint32_t acc = 0;
  int bits = 0;
  size_t n = 0;
  for (char c : text) {
    int v = decode_char(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n < 16) id.bytes[n++] = static_cast<uint8_t>(acc >> bits);
    }
  }
  if ((acc & ((1u << bits) - 1)) != 0) return std::nullopt;  // non-canonical padding bits
  return id;
}

protocol::Uuid random_uuid() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  for (;;) {
    protocol::Uuid id;
    for (auto& b : id.bytes) b = static_cast<uint8_t>(rng());
    id.bytes[6] = static_cast<uint8_t>((id.bytes[6] & 0x0f) | 0x40);  // version 4
    id.bytes[8] = static_cast<uint8_t>((id.bytes[8] & 0x3f) | 0x80);  // IETF variant
    if (!id.is_zero() && uuid_to_base64(id)[0] != '-') return id;
  }
}

}  // namespace runnel::storage
