#include "broker/admin/rest/base64.h"

#include "base/base64.h"

namespace runnel::broker::admin::rest {

// The bytes are base/base64.h's (Beast's); only REST Proxy's reading rules
// are added here.
std::string base64_encode(std::string_view bytes) { return runnel::base64_encode(bytes); }

std::optional<std::string> base64_decode(std::string_view text) {
  // Written padding must complete the last quantum: base64_decode checks it.
  if (text.ends_with('=')) return runnel::base64_decode(text);
  if (text.size() % 4 == 1) return std::nullopt;  // 6 bits make no byte
  std::string padded(text);
  padded.append((4 - padded.size() % 4) % 4, '=');
  return runnel::base64_decode(padded);
}

}  // namespace runnel::broker::admin::rest
