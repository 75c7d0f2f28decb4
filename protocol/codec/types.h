// Value types shared by every generated message: UUIDs, raw tagged fields,
// and the `records` field, which is a view (never a copy) of batch bytes.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace runnel::protocol {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;

// Kafka's UUID: 16 bytes on the wire, most significant half first.
struct Uuid {
  std::array<uint8_t, 16> bytes{};
  auto operator<=>(const Uuid&) const = default;
  bool is_zero() const {
    for (auto b : bytes)
      if (b) return false;
    return true;
  }
};

// A tagged field this version of Runnel does not know: kept as raw bytes so a
// decoded message re-encodes to exactly the bytes it came from.
struct RawTaggedField {
  uint32_t tag = 0;
  Bytes data;
  bool operator==(const RawTaggedField&) const = default;
};

// A region of a file, sent with sendfile(2) instead of being copied.
struct FileRegion {
  int fd = -1;
  int64_t offset = 0;
  int32_t length = 0;
  std::shared_ptr<const void> keepalive;  // holds the fd open while in flight
};

// The `records` field of Produce and Fetch: record batches that the codec
// never interprets. Either null, a view of memory (kept alive by `owner`,
// usually the request frame), or a file region the connection sends directly.
class Records {
 public:
  Records() = default;  // null
  static Records view(ByteView bytes, std::shared_ptr<const void> owner = {}) {
    Records r;
    r.kind_ = Kind::memory;
    r.view_ = bytes;
    r.owner_ = std::move(owner);
    return r;
  }
  static Records copy_of(ByteView bytes) {
    auto owned = std::make_shared<Bytes>(bytes.begin(), bytes.end());
    ByteView v(owned->data(), owned->size());
    return view(v, std::move(owned));
  }
  static Records file(FileRegion region) {
    Records r;
    r.kind_ = Kind::file;
    r.region_ = std::move(region);
    return r;
  }

  bool is_null() const { return kind_ == Kind::null; }
  bool is_file() const { return kind_ == Kind::file; }
  size_t size() const {
    switch (kind_) {
      case Kind::memory: return view_.size();
      case Kind::file: return static_cast<size_t>(region_.length);
      default: return 0;
    }
  }
  ByteView bytes() const { return view_; }  // memory records only
  const FileRegion& region() const { return region_; }

  bool operator==(const Records& o) const {
    if (kind_ != o.kind_) return false;
    if (kind_ == Kind::memory)
      return view_.size() == o.view_.size() &&
             (view_.empty() || std::memcmp(view_.data(), o.view_.data(), view_.size()) == 0);
    if (kind_ == Kind::file)
      return region_.fd == o.region_.fd && region_.offset == o.region_.offset &&
             region_.length == o.region_.length;
    return true;
  }

 private:
  enum class Kind : uint8_t { null, memory, file };
  Kind kind_ = Kind::null;
  ByteView view_;
  std::shared_ptr<const void> owner_;
  FileRegion region_;
};

}  // namespace runnel::protocol
