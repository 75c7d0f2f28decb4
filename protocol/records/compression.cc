#include "protocol/records/compression.h"

#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>

namespace runnel::protocol::records {

namespace {

constexpr int kGzipDefaultLevel = -1;  // zlib's Z_DEFAULT_COMPRESSION, Java's Deflater default
constexpr int kLz4DefaultLevel = 9;
constexpr int kLz4MaxLevel = 17;  // lz4-java's highCompressor ceiling; liblz4 treats >12 as 12
constexpr int kZstdDefaultLevel = 3;
constexpr int kZstdWindowLogMax = 27;  // zstd's ZSTD_WINDOWLOG_LIMIT_DEFAULT (a static-only macro)

// snappy-java (xerial) stream header: magic, then format version and the
// oldest compatible version, both int32 big-endian; blocks follow, each an
// int32 big-endian length and that many bytes of raw snappy.
constexpr uint8_t kXerialMagic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
constexpr size_t kXerialHeaderSize = 16;
constexpr size_t kXerialBlockSize = 32 * 1024;  // SnappyOutputStream's default

// Grows an output buffer up to one byte past the limit: a decoder that fills
// that extra byte has proved the output too large, and one that stops short
// of it was never starved of room before finishing.
class BoundedOutput {
 public:
  explicit BoundedOutput(size_t limit) : cap_(limit == SIZE_MAX ? limit : limit + 1), limit_(limit) {}

  // Free space to decode into; empty only once the cap is reached.
  std::span<uint8_t> room() {
    if (used_ == buf_.size() && buf_.size() < cap_) {
      size_t grown = std::max<size_t>(buf_.size() * 2, 64 * 1024);
      buf_.resize(std::min(cap_, grown));
    }
    return {buf_.data() + used_, buf_.size() - used_};
  }
  void commit(size_t n) { used_ += n; }
  bool exceeded() const { return used_ > limit_; }
  Bytes finish() {
    buf_.resize(used_);
    return std::move(buf_);
  }

 private:
  Bytes buf_;
  size_t used_ = 0;
  size_t cap_;
  size_t limit_;
};

CodecResult fail(std::string why) { return CodecResult{{}, std::move(why)}; }
CodecResult too_large(size_t limit) {
  return fail("decompressed size exceeds the limit of " + std::to_string(limit) + " bytes");
}

// --- gzip ------------------------------------------------------------------

CodecResult gzip_compress(ByteView in, int level) {
  z_stream z{};
  // 15 window bits + 16: write a gzip header and trailer, not zlib's.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  Bytes out(deflateBound(&z, in.size()));
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return {std::move(out), {}};
}

CodecResult gzip_decompress(ByteView in, size_t max_output) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  BoundedOutput out(max_output);
  for (;;) {
    auto room = out.room();
    if (room.empty()) return too_large(max_output);
    z.next_out = room.data();
    z.avail_out = static_cast<uInt>(std::min<size_t>(room.size(), UINT32_MAX));
    uInt before_in = z.avail_in, before_out = z.avail_out;
    int rc = inflate(&z, Z_NO_FLUSH);
    out.commit(before_out - z.avail_out);
    if (out.exceeded()) return too_large(max_output);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      // Java's GZIPInputStream reads concatenated members; so do we.
      inflateReset(&z);
      continue;
    }
    if (rc == Z_BUF_ERROR || (rc == Z_OK && z.avail_in == before_in && z.avail_out == before_out)) {
      if (z.avail_in == 0) return fail("gzip: truncated stream");
      return fail("gzip: decoder made no progress");
    }
    if (rc != Z_OK) return fail(std::string("gzip: ") + (z.msg ? z.msg : "corrupt stream"));
  }
  return {out.finish(), {}};
}

// --- snappy ----------------------------------------------------------------

void put_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
uint32_t get_be32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 |
         static_cast<uint32_t>(p[2]) << 8 | p[3];
}

CodecResult snappy_compress(ByteView in) {
  Bytes out(kXerialHeaderSize);
  std::memcpy(out.data(), kXerialMagic, sizeof kXerialMagic);
  put_be32(out.data() + 8, 1);   // version
  put_be32(out.data() + 12, 1);  // minimum compatible version
  for (size_t at = 0; at < in.size(); at += kXerialBlockSize) {
    size_t n = std::min(kXerialBlockSize, in.size() - at);
    size_t start = out.size();
    out.resize(start + 4 + snappy::MaxCompressedLength(n));
    size_t written = 0;
    snappy::RawCompress(reinterpret_cast<const char*>(in.data() + at), n,
                        reinterpret_cast<char*>(out.data() + start + 4), &written);
    put_be32(out.data() + start, static_cast<uint32_t>(written));
    out.resize(start + 4 + written);
  }
  return {std::move(out), {}};
}

// Appends one raw snappy stream to `out`, checking its declared length
// against what the limit still allows before allocating.
bool snappy_raw_append(ByteView in, size_t max_output, Bytes& out, std::string& error) {
  auto src = reinterpret_cast<const char*>(in.data());
  size_t n = 0;
  if (!snappy::GetUncompressedLength(src, in.size(), &n)) {
    error = "snappy: corrupt length";
    return false;
  }
  if (n > max_output - out.size()) {
    error = "decompressed size exceeds the limit of " + std::to_string(max_output) + " bytes";
    return false;
  }
  size_t start = out.size();
  out.resize(start + n);
  if (!snappy::RawUncompress(src, in.size(), reinterpret_cast<char*>(out.data() + start))) {
    error = "snappy: corrupt data";
    return false;
  }
  return true;
}

CodecResult snappy_decompress(ByteView in, size_t max_output) {
  Bytes out;
  std::string error;
  bool xerial = in.size() >= kXerialHeaderSize && std::memcmp(in.data(), kXerialMagic, sizeof kXerialMagic) == 0;
  if (!xerial) {
    if (!snappy_raw_append(in, max_output, out, error)) return fail(error);
    return {std::move(out), {}};
  }
  // The version fields are not checked: snappy-java itself only refuses a
  // minimum compatible version above its own, and every writer says 1.
  size_t at = kXerialHeaderSize;
  while (at < in.size()) {
    if (in.size() - at < 4) return fail("snappy: truncated xerial block length");
    uint32_t len = get_be32(in.data() + at);
    at += 4;
    if (len > in.size() - at) return fail("snappy: xerial block past end of input");
    if (!snappy_raw_append(in.subspan(at, len), max_output, out, error)) return fail(error);
    at += len;
  }
  return {std::move(out), {}};
}

// --- lz4 -------------------------------------------------------------------

CodecResult lz4_compress(ByteView in, int level) {
  LZ4F_preferences_t prefs{};
  // What Java's Lz4BlockOutputStream writes (and every Kafka client reads):
  // 64 KiB independent blocks, no checksums, no content size.
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  // Java uses the fast compressor at the default level 9 and the HC one at
  // any other; liblz4's level 0 is its fast mode.
  prefs.compressionLevel = level == kLz4DefaultLevel ? 0 : level;
  Bytes out(LZ4F_compressFrameBound(in.size(), &prefs));
  size_t n = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
  if (LZ4F_isError(n)) throw std::runtime_error(std::string("LZ4F_compressFrame: ") + LZ4F_getErrorName(n));
  out.resize(n);
  return {std::move(out), {}};
}

CodecResult lz4_decompress(ByteView in, size_t max_output) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION)))
    throw std::runtime_error("LZ4F_createDecompressionContext failed");
  std::unique_ptr<LZ4F_dctx, size_t (*)(LZ4F_dctx*)> dctx(raw, LZ4F_freeDecompressionContext);
  BoundedOutput out(max_output);
  size_t at = 0;
  for (;;) {
    auto room = out.room();
    if (room.empty()) return too_large(max_output);
    size_t dst_size = room.size();
    size_t src_size = in.size() - at;
    size_t hint = LZ4F_decompress(dctx.get(), room.data(), &dst_size, in.data() + at, &src_size, nullptr);
    if (LZ4F_isError(hint)) return fail(std::string("lz4: ") + LZ4F_getErrorName(hint));
    at += src_size;
    out.commit(dst_size);
    if (out.exceeded()) return too_large(max_output);
    if (hint == 0 && at == in.size()) break;  // the last frame is complete
    // hint == 0 with input left: another frame follows, decoded with the
    // same context. Otherwise, out of input while the decoder still wants
    // some, without having filled the room it had, is a truncated frame.
    if (hint != 0 && at == in.size() && dst_size < room.size()) return fail("lz4: truncated frame");
    if (src_size == 0 && dst_size == 0 && hint != 0) return fail("lz4: decoder made no progress");
  }
  return {out.finish(), {}};
}

// --- zstd ------------------------------------------------------------------

CodecResult zstd_compress(ByteView in, int level) {
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!cctx) throw std::runtime_error("ZSTD_createCCtx failed");
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level);
  Bytes out(ZSTD_compressBound(in.size()));
  size_t n = ZSTD_compress2(cctx.get(), out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n)) throw std::runtime_error(std::string("ZSTD_compress2: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return {std::move(out), {}};
}

CodecResult zstd_decompress(ByteView in, size_t max_output) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!dctx) throw std::runtime_error("ZSTD_createDCtx failed");
  // Pin the window limit to zstd's default (128 MiB, what Kafka's decoder
  // accepts too) so a library upgrade cannot raise it. The window is
  // reserved, not written: resident memory still follows max_output.
  ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, kZstdWindowLogMax);
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  BoundedOutput out(max_output);
  for (;;) {
    auto room = out.room();
    if (room.empty()) return too_large(max_output);
    ZSTD_outBuffer dst{room.data(), room.size(), 0};
    size_t before_in = src.pos;
    size_t hint = ZSTD_decompressStream(dctx.get(), &dst, &src);
    if (ZSTD_isError(hint)) return fail(std::string("zstd: ") + ZSTD_getErrorName(hint));
    out.commit(dst.pos);
    if (out.exceeded()) return too_large(max_output);
    // 0: a frame ended and is fully flushed; more input may hold another.
    if (hint == 0 && src.pos == src.size) break;
    if (src.pos == src.size && dst.pos < dst.size) return fail("zstd: truncated frame");
    if (src.pos == before_in && dst.pos == 0) return fail("zstd: decoder made no progress");
  }
  return {out.finish(), {}};
}

int clamp_level(Compression codec, int level) {
  switch (codec) {
    case Compression::gzip: return level == kGzipDefaultLevel ? level : std::clamp(level, 1, 9);
    case Compression::lz4: return std::clamp(level, 1, kLz4MaxLevel);
    case Compression::zstd: return std::clamp(level, ZSTD_minCLevel(), ZSTD_maxCLevel());
    default: return level;
  }
}

}  // namespace

int default_compression_level(Compression codec) {
  switch (codec) {
    case Compression::gzip: return kGzipDefaultLevel;
    case Compression::lz4: return kLz4DefaultLevel;
    case Compression::zstd: return kZstdDefaultLevel;
    default: return 0;
  }
}

bool valid_compression_level(Compression codec, int level) { return clamp_level(codec, level) == level; }

CodecResult compress(Compression codec, ByteView input, std::optional<int> level) {
  int l = clamp_level(codec, level.value_or(default_compression_level(codec)));
  switch (codec) {
    case Compression::none: return {Bytes(input.begin(), input.end()), {}};
    case Compression::gzip: return gzip_compress(input, l);
    case Compression::snappy: return snappy_compress(input);
    case Compression::lz4: return lz4_compress(input, l);
    case Compression::zstd: return zstd_compress(input, l);
  }
  return fail("unknown compression codec " + std::to_string(static_cast<int>(codec)));
}

CodecResult decompress(Compression codec, ByteView input, size_t max_output) {
  switch (codec) {
    case Compression::none:
      if (input.size() > max_output) return too_large(max_output);
      return {Bytes(input.begin(), input.end()), {}};
    case Compression::gzip: return gzip_decompress(input, max_output);
    case Compression::snappy: return snappy_decompress(input, max_output);
    case Compression::lz4: return lz4_decompress(input, max_output);
    case Compression::zstd: return zstd_decompress(input, max_output);
  }
  return fail("unknown compression codec " + std::to_string(static_cast<int>(codec)));
}

const char* compression_name(Compression codec) {
  switch (codec) {
    case Compression::none: return "none";
    case Compression::gzip: return "gzip";
    case Compression::snappy: return "snappy";
    case Compression::lz4: return "lz4";
    case Compression::zstd: return "zstd";
  }
  return "unknown";
}

}  // namespace runnel::protocol::records
