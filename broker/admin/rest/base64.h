// Base64 as REST Proxy reads and writes BINARY data and header values:
// RFC 4648's standard alphabet; '=' padding written, optional when read
// (as java.util.Base64's basic decoder); any other character, or a length
// no bytes can have, is refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace runnel::broker::admin::rest {

std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace runnel::broker::admin::rest
