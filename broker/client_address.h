// A client's address as Kafka's Java code writes it (InetAddress
// .getHostAddress()): what ACLs' host field is compared with (kafka-acls
// --allow-host) and what a group member's client.host shows. IPv4 is the
// dotted quad; IPv6 is eight groups of lower-case hex without leading
// zeros and without "::" compression (::1 is 0:0:0:0:0:0:0:1), with
// "%<scope id>" for a scoped address; an IPv4-mapped IPv6 address is the
// IPv4 address, as Java makes it an Inet4Address.
#pragma once

#include <string>

#include "broker/asio.h"

namespace runnel::broker {

std::string java_host_address(const asio::ip::address& address);

}  // namespace runnel::broker
