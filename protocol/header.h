// Request and response headers (RequestHeader.json / ResponseHeader.json).
//
//   request  v0: api_key int16, api_version int16, correlation_id int32
//            v1: v0 + client_id nullable string (int16 length, even in v2)
//            v2: v1 + tagged fields
//   response v0: correlation_id int32
//            v1: v0 + tagged fields
//
// A flexible API version uses request v2 and response v1; every other
// version uses request v1 and response v0. ApiVersions responses always use
// v0 so a client can read the header of a version it does not yet know
// (KIP-511).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"

namespace runnel::protocol {

inline constexpr int16_t kApiVersionsKey = 18;

struct RequestHeader {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  std::vector<RawTaggedField> unknown_tagged_fields;

  void encode(Writer& w, int16_t header_version) const;
  void decode(Reader& r, int16_t header_version);
  bool operator==(const RequestHeader&) const = default;
};

struct ResponseHeader {
  int32_t correlation_id = 0;
  std::vector<RawTaggedField> unknown_tagged_fields;

  void encode(Writer& w, int16_t header_version) const;
  void decode(Reader& r, int16_t header_version);
  bool operator==(const ResponseHeader&) const = default;
};

// Reads only api_key and api_version, the two fields every header version
// starts with, so the caller can choose the header version for the rest.
struct HeaderPeek {
  int16_t api_key = 0;
  int16_t api_version = 0;
};
std::optional<HeaderPeek> peek_header(ByteView frame);

inline int16_t request_header_version(bool flexible) { return flexible ? 2 : 1; }
inline int16_t response_header_version(int16_t api_key, bool flexible) {
  return api_key == kApiVersionsKey ? 0 : (flexible ? 1 : 0);
}

}  // namespace runnel::protocol
