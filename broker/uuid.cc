#include "broker/uuid.h"

#include <random>

namespace runnel::broker {

namespace {
const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
}

protocol::Uuid random_uuid() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  protocol::Uuid u;
  // Kafka reserves the zero UUID and the "metadata topic" UUID (1); and ids
  // whose base64 starts with '-' confuse command lines, so Kafka redraws them.
  do {
    for (auto& b : u.bytes) b = static_cast<uint8_t>(rng());
    u.bytes[6] = static_cast<uint8_t>((u.bytes[6] & 0x0f) | 0x40);  // version 4
    u.bytes[8] = static_cast<uint8_t>((u.bytes[8] & 0x3f) | 0x80);  // IETF variant
  } while (to_base64url(u)[0] == '-');
  return u;
}

std::string to_base64url(const protocol::Uuid& u) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t b : u.bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 0x3f]);
  return out;  // 22 characters, no padding
}

bool from_base64url(const std::string& s, protocol::Uuid& out) {
  if (s.size() != 22) return false;
  uint32_t acc = 0;
  int bits = 0;
  size_t n = 0;
  for (char c : s) {
    const char* p = std::char_traits<char>::find(kAlphabet, 64, c);
    if (!p) return false;
    acc = (acc << 6) | static_cast<uint32_t>(p - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n < 16) out.bytes[n++] = static_cast<uint8_t>(acc >> bits);
    }
  }
  return n == 16;
}

std::string random_cluster_id() { return to_base64url(random_uuid()); }

}  // namespace runnel::broker
