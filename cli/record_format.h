// kcat's -f output format strings for consumed records:
//   %t topic  %p partition  %o offset  %k key  %K key length (-1 null)
//   %s value  %S value length (-1 null)  %R value length as a big-endian
//   int32  %T timestamp (ms)  %h headers as k=v,k=v  %% a percent sign
//   \n \r \t newline, carriage return, tab; \\ a backslash; \xHH a byte.
// A null key or value prints as nothing, as in kcat.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace runnel::cli {

struct ConsumedRecord {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  std::vector<std::pair<std::string_view, std::optional<std::string_view>>> headers;
};

class RecordFormat {
 public:
  // Parses `spec`; UsageError on an unknown %-token or a bad escape.
  explicit RecordFormat(std::string_view spec);
  // Appends `r` formatted to `out`.
  void format(const ConsumedRecord& r, std::string& out) const;

 private:
  struct Piece {
    char token;           // 0: literal text
    std::string literal;
  };
  std::vector<Piece> pieces_;
};

}  // namespace runnel::cli
