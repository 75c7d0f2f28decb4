// Kafka's UUIDs: random v4, shown as URL-safe base64 without padding (22
// characters), as Kafka prints cluster ids and topic ids.
#pragma once

#include <string>

#include "protocol/codec/types.h"

namespace runnel::broker {

protocol::Uuid random_uuid();
std::string to_base64url(const protocol::Uuid& u);
bool from_base64url(const std::string& s, protocol::Uuid& out);
std::string random_cluster_id();

}  // namespace runnel::broker
