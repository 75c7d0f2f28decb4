// Timestamps as REST Proxy v3 writes and reads them: ISO-8601 instants in
// UTC. Written as java.time's ISO_INSTANT prints an Instant of whole
// milliseconds ("2024-05-01T12:00:00Z", "2024-05-01T12:00:00.123Z"); read
// with an optional fraction (digits past milliseconds dropped) and a zone
// of Z or +hh:mm / -hh:mm.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace runnel::broker::admin::rest {

std::string format_instant(int64_t epoch_ms);
std::optional<int64_t> parse_instant(std::string_view text);

}  // namespace runnel::broker::admin::rest
