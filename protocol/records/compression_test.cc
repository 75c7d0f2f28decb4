#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "protocol/records/compression.h"

using namespace runnel::protocol;
using namespace runnel::protocol::records;

namespace {

constexpr Compression kCodecs[] = {Compression::none, Compression::gzip, Compression::snappy, Compression::lz4,
                                   Compression::zstd};
constexpr Compression kRealCodecs[] = {Compression::gzip, Compression::snappy, Compression::lz4,
                                       Compression::zstd};

// Half text-like, half random, so blocks of both kinds appear.
Bytes sample(size_t n, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = (i / 4096) % 2 ? static_cast<uint8_t>(rng()) : "kafka records "[i % 14];
  return b;
}

ByteView v(const Bytes& b) { return {b.data(), b.size()}; }

}  // namespace

TEST_CASE("every codec round-trips empty, tiny and multi-block inputs", "[records]") {
  for (auto codec : kCodecs) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{100}, size_t{32 * 1024}, size_t{300 * 1024 + 17}}) {
      INFO(compression_name(codec) << " " << n << " bytes");
      Bytes in = sample(n);
      auto packed = compress(codec, v(in));
      REQUIRE(packed.ok());
      auto back = decompress(codec, v(packed.bytes), n);  // exactly at the limit is allowed
      REQUIRE(back.ok());
      REQUIRE(back.bytes == in);
    }
  }
}

TEST_CASE("every codec round-trips at its minimum, default and maximum level", "[records]") {
  Bytes in = sample(100 * 1024);
  struct Case {
    Compression codec;
    int level;
  };
  for (auto c : {Case{Compression::gzip, 1}, Case{Compression::gzip, 9}, Case{Compression::gzip, -1},
                 Case{Compression::lz4, 1}, Case{Compression::lz4, 9}, Case{Compression::lz4, 17},
                 Case{Compression::zstd, -5}, Case{Compression::zstd, 3}, Case{Compression::zstd, 19}}) {
    INFO(compression_name(c.codec) << " level " << c.level);
    REQUIRE(valid_compression_level(c.codec, c.level));
    auto packed = compress(c.codec, v(in), c.level);
    REQUIRE(packed.ok());
    auto back = decompress(c.codec, v(packed.bytes), in.size());
    REQUIRE(back.ok());
    REQUIRE(back.bytes == in);
  }
}

TEST_CASE("compression levels follow Kafka's config ranges", "[records]") {
  REQUIRE(default_compression_level(Compression::gzip) == -1);
  REQUIRE(default_compression_level(Compression::lz4) == 9);
  REQUIRE(default_compression_level(Compression::zstd) == 3);
  REQUIRE_FALSE(valid_compression_level(Compression::gzip, 0));
  REQUIRE_FALSE(valid_compression_level(Compression::gzip, 10));
  REQUIRE_FALSE(valid_compression_level(Compression::lz4, 0));
  REQUIRE_FALSE(valid_compression_level(Compression::lz4, 18));
  REQUIRE(valid_compression_level(Compression::zstd, -131072));
  REQUIRE(valid_compression_level(Compression::zstd, 22));
  REQUIRE_FALSE(valid_compression_level(Compression::zstd, 23));
  REQUIRE(valid_compression_level(Compression::snappy, 12345));
  // Out-of-range levels are clamped, not refused.
  Bytes in = sample(1000);
  auto packed = compress(Compression::gzip, v(in), 42);
  REQUIRE(packed.ok());
  REQUIRE(decompress(Compression::gzip, v(packed.bytes), in.size()).bytes == in);
}

TEST_CASE("snappy compresses in snappy-java's xerial framing with 32 KiB blocks", "[records]") {
  Bytes in = sample(70 * 1024);
  auto packed = compress(Compression::snappy, v(in));
  REQUIRE(packed.ok());
  const uint8_t header[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  REQUIRE(packed.bytes.size() > 16);
  REQUIRE(std::memcmp(packed.bytes.data(), header, 16) == 0);
  // Walk the blocks: 32 KiB, 32 KiB, then the remaining 6 KiB.
  size_t at = 16;
  std::vector<size_t> block_sizes;
  while (at < packed.bytes.size()) {
    const uint8_t* p = packed.bytes.data() + at;
    uint32_t len = uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
    size_t plain = 0;
    REQUIRE(snappy::GetUncompressedLength(reinterpret_cast<const char*>(p + 4), len, &plain));
    block_sizes.push_back(plain);
    at += 4 + len;
  }
  REQUIRE(at == packed.bytes.size());
  REQUIRE(block_sizes == std::vector<size_t>{32768, 32768, 6144});
}

TEST_CASE("snappy decompresses raw snappy as librdkafka writes it", "[records]") {
  Bytes in = sample(50 * 1024);
  std::string raw;
  snappy::Compress(reinterpret_cast<const char*>(in.data()), in.size(), &raw);
  auto back = decompress(Compression::snappy, ByteView(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()),
                         in.size());
  REQUIRE(back.ok());
  REQUIRE(back.bytes == in);
}

TEST_CASE("lz4 output is the frame Java's Lz4BlockOutputStream writes", "[records]") {
  Bytes in = sample(1000);
  auto packed = compress(Compression::lz4, v(in));
  REQUIRE(packed.ok());
  // Magic 0x184D2204 little-endian; FLG: version 01, independent blocks, no
  // checksums, no content size; BD: 64 KiB blocks.
  const uint8_t start[6] = {0x04, 0x22, 0x4D, 0x18, 0x60, 0x40};
  REQUIRE(std::memcmp(packed.bytes.data(), start, 6) == 0);
  // Ends with the zero end mark and no content checksum.
  const uint8_t end_mark[4] = {0, 0, 0, 0};
  REQUIRE(std::memcmp(packed.bytes.data() + packed.bytes.size() - 4, end_mark, 4) == 0);
}

TEST_CASE("lz4 decompresses frames with content size and checksums, as librdkafka may write", "[records]") {
  Bytes in = sample(200 * 1024);
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max256KB;
  prefs.frameInfo.blockMode = LZ4F_blockLinked;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  prefs.frameInfo.contentSize = in.size();
  Bytes frame(LZ4F_compressFrameBound(in.size(), &prefs));
  size_t n = LZ4F_compressFrame(frame.data(), frame.size(), in.data(), in.size(), &prefs);
  REQUIRE_FALSE(LZ4F_isError(n));
  frame.resize(n);
  auto back = decompress(Compression::lz4, v(frame), in.size());
  REQUIRE(back.ok());
  REQUIRE(back.bytes == in);
}

TEST_CASE("zstd decompresses frames without a content size", "[records]") {
  Bytes in = sample(300 * 1024);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  Bytes frame(ZSTD_compressBound(in.size()));
  ZSTD_outBuffer out{frame.data(), frame.size(), 0};
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  // Streaming without a pledged size leaves the content size out, as
  // zstd-jni's ZstdOutputStream does.
  while (src.pos < src.size) REQUIRE_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &out, &src, ZSTD_e_continue)));
  size_t left;
  do {
    left = ZSTD_compressStream2(cctx, &out, &src, ZSTD_e_end);
    REQUIRE_FALSE(ZSTD_isError(left));
  } while (left != 0);
  ZSTD_freeCCtx(cctx);
  frame.resize(out.pos);
  REQUIRE(ZSTD_getFrameContentSize(frame.data(), frame.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
  auto back = decompress(Compression::zstd, v(frame), in.size());
  REQUIRE(back.ok());
  REQUIRE(back.bytes == in);
}

TEST_CASE("gzip reads concatenated members and refuses zlib-wrapped data", "[records]") {
  Bytes a = sample(5000, 1), b = sample(7000, 2);
  Bytes both = compress(Compression::gzip, v(a)).bytes;
  Bytes second = compress(Compression::gzip, v(b)).bytes;
  both.insert(both.end(), second.begin(), second.end());
  auto back = decompress(Compression::gzip, v(both), 1 << 20);
  REQUIRE(back.ok());
  Bytes expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  REQUIRE(back.bytes == expected);

  Bytes zlib_wrapped(compressBound(a.size()));
  uLongf len = zlib_wrapped.size();
  REQUIRE(compress2(zlib_wrapped.data(), &len, a.data(), a.size(), 6) == Z_OK);
  zlib_wrapped.resize(len);
  REQUIRE_FALSE(decompress(Compression::gzip, v(zlib_wrapped), 1 << 20).ok());
}

TEST_CASE("decompression bombs are refused at the limit for every codec", "[records]") {
  Bytes zeros(8 << 20, 0);
  for (auto codec : kCodecs) {
    INFO(compression_name(codec));
    auto packed = compress(codec, v(zeros));
    REQUIRE(packed.ok());
    auto back = decompress(codec, v(packed.bytes), 1 << 20);
    REQUIRE_FALSE(back.ok());
    REQUIRE(back.error.find("exceeds the limit") != std::string::npos);
    // One byte short of the real size is still too much.
    REQUIRE_FALSE(decompress(codec, v(packed.bytes), zeros.size() - 1).ok());
  }
}

TEST_CASE("raw snappy declaring a huge length is refused before allocating", "[records]") {
  // Varint 0xFFFFFFFF as the uncompressed length, then nothing.
  const uint8_t bomb[] = {0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00};
  auto back = decompress(Compression::snappy, ByteView(bomb, sizeof bomb), 1 << 20);
  REQUIRE_FALSE(back.ok());
}

TEST_CASE("truncated compressed data fails for every codec", "[records]") {
  Bytes in = sample(100 * 1024);
  for (auto codec : kRealCodecs) {
    auto packed = compress(codec, v(in)).bytes;
    // Every prefix length for a small part, then coarser steps.
    for (size_t n = 0; n < packed.size(); n += n < 64 ? 1 : 97) {
      INFO(compression_name(codec) << " cut at " << n << " of " << packed.size());
      auto back = decompress(codec, ByteView(packed.data(), n), in.size());
      // xerial framing has no end mark: a cut between blocks decodes to a
      // shorter result, which the record walk then catches.
      if (codec == Compression::snappy && back.ok())
        REQUIRE(back.bytes.size() < in.size());
      else
        REQUIRE_FALSE(back.ok());
    }
  }
}

TEST_CASE("damaged compressed data never crashes", "[records]") {
  Bytes in = sample(10 * 1024);
  for (auto codec : kRealCodecs) {
    auto packed = compress(codec, v(in)).bytes;
    for (size_t i = 0; i < packed.size(); i += 1 + packed.size() / 500) {
      for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
        Bytes damaged = packed;
        damaged[i] ^= mask;
        auto back = decompress(codec, v(damaged), in.size());
        if (back.ok()) REQUIRE(back.bytes.size() <= in.size());
      }
    }
  }
}

TEST_CASE("trailing garbage after a complete stream fails", "[records]") {
  Bytes in = sample(1000);
  for (auto codec : kRealCodecs) {
    INFO(compression_name(codec));
    auto packed = compress(codec, v(in)).bytes;
    if (codec == Compression::snappy) continue;  // xerial blocks run to the end by construction
    packed.push_back(0x42);
    packed.push_back(0x17);
    REQUIRE_FALSE(decompress(codec, v(packed), 1 << 20).ok());
  }
}

TEST_CASE("an unknown codec is an error, not a crash", "[records]") {
  Bytes in = sample(10);
  REQUIRE_FALSE(compress(static_cast<Compression>(5), v(in)).ok());
  REQUIRE_FALSE(decompress(static_cast<Compression>(7), v(in), 100).ok());
  REQUIRE(std::string(compression_name(static_cast<Compression>(6))) == "unknown");
}
