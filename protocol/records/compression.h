// The four codecs a RecordBatch may use, in the framings Kafka clients write.
//
//   gzip    RFC 1952 gzip members (Java's GZIPOutputStream; zlib-wrapped data is
//           refused because Java consumers could not read it back)
//   snappy  compress: snappy-java's xerial framing, as the Java producer writes;
//           decompress: that framing or raw snappy, as librdkafka writes
//   lz4     the standard LZ4 frame format, 64 KiB independent blocks
//   zstd    standard zstd frames; the content size may be absent
//
// Decompression is always bounded: output beyond `max_output` bytes is an
// error, so a small batch cannot make the broker allocate without limit.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "protocol/codec/types.h"
#include "protocol/records/batch_format.h"

namespace runnel::protocol::records {

struct CodecResult {
  Bytes bytes;
  std::string error;  // empty on success
  bool ok() const { return error.empty(); }
};

// Kafka's default for compression.<codec>.level (0 for codecs without levels).
int default_compression_level(Compression codec);

// Whether `level` is allowed for compression.<codec>.level, as Kafka's config
// validation decides. Codecs without levels accept any value and ignore it.
bool valid_compression_level(Compression codec, int level);

// Compresses `input` with `codec`; nullopt means Kafka's default level. An
// out-of-range level is clamped: configs are checked with
// valid_compression_level() before they get here. Fails only for an unknown
// codec; a library failure on valid input is a broken invariant and throws.
CodecResult compress(Compression codec, ByteView input, std::optional<int> level = std::nullopt);

// Decompresses `input`, failing (never allocating more than about
// `max_output` bytes) if the result would exceed `max_output` bytes, and on
// truncated, corrupt or trailing data.
CodecResult decompress(Compression codec, ByteView input, size_t max_output);

// "none", "gzip", "snappy", "lz4", "zstd", or "unknown".
const char* compression_name(Compression codec);

}  // namespace runnel::protocol::records
