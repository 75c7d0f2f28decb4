// Shared body of the request and response fuzz targets: decode a frame body
// (header + message) for whatever API and version it names, then check that
// re-encoding what was decoded and decoding it again gives the same message.
// (Decoded bytes need not re-encode identically: a varint may be written
// non-canonically, a bool as 2, a tagged field at its default value.)
#pragma once

#include <cstdlib>

#include "protocol/header.h"
#include "protocol/messages/all_apis.h"

namespace runnel::protocol::fuzz {

template <typename Msg>
void check_stable(Reader& r, int16_t version) {
  Msg first;
  first.decode(r, version);
  if (!r.ok()) return;
  Bytes again;
  Writer w(again);
  first.encode(w, version);
  if (first.size(version) != again.size()) std::abort();
  Reader r2(again);
  Msg second;
  second.decode(r2, version);
  if (!r2.ok() || r2.remaining() != 0) std::abort();
  if (first == first) {
    if (!(second == first)) std::abort();
    return;
  }
  // A float64 NaN (DescribeClientQuotas values) is not equal to itself: the
  // message is then stable if its second encoding repeats the first byte for byte.
  Bytes third;
  Writer w3(third);
  second.encode(w3, version);
  if (third != again) std::abort();
}

template <bool IsRequest>
void fuzz_frame(const uint8_t* data, size_t size) {
  auto peek = peek_header(ByteView(data, size));
  if (!peek) return;
  for_each_api([&](auto api) {
    using Api = decltype(api);
    if (Api::key != peek->api_key) return;
    int16_t v = peek->api_version;
    if (v < Api::min_version || v > Api::max_version) return;
    Reader r(data, size);
    if constexpr (IsRequest) {
      RequestHeader h;
      h.decode(r, request_header_version(Api::is_flexible(v)));
      if (r.ok()) check_stable<typename Api::Request>(r, v);
    } else {
      // Responses carry no api key; the fuzzer's first four bytes choose it.
      Reader body(data + 4, size - 4);
      ResponseHeader h;
      h.decode(body, response_header_version(Api::key, Api::is_flexible(v)));
      if (body.ok()) check_stable<typename Api::Response>(body, v);
    }
  });
}

}  // namespace runnel::protocol::fuzz
