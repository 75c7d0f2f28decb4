#include "broker/client_address.h"

#include <cstdio>

namespace runnel::broker {

std::string java_host_address(const asio::ip::address& address) {
  if (address.is_v4()) return address.to_string();
  const auto v6 = address.to_v6();
  if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_string();
  const auto bytes = v6.to_bytes();
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 2) {
    char group[8];
    std::snprintf(group, sizeof group, "%x", (unsigned{bytes[i]} << 8) | bytes[i + 1]);
    if (i > 0) out += ':';
    out += group;
  }
  if (v6.scope_id() != 0) out += "%" + std::to_string(v6.scope_id());
  return out;
}

}  // namespace runnel::broker
