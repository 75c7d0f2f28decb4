// Kafka's text form of a UUID: 16 bytes in URL-safe base64 without padding
// (22 characters), as Uuid.toString() prints topic, cluster and directory ids.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/codec/types.h"

namespace runnel::storage {

std::string uuid_to_base64(const protocol::Uuid& id);
std::optional<protocol::Uuid> uuid_from_base64(std::string_view text);
// A random (v4-style) UUID whose text form does not start with '-' and is not
// zero, as Kafka's Uuid.randomUuid() guarantees.
protocol::Uuid random_uuid();

}  // namespace runnel::storage
