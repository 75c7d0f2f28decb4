#include "cli/record_format.h"

#include <cctype>

#include "cli/kafka_errors.h"

namespace runnel::cli {

namespace {

constexpr std::string_view kTokens = "tpokKsSRTh";

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

void append_be32(int32_t v, std::string& out) {
  uint32_t u = static_cast<uint32_t>(v);
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((u >> shift) & 0xff));
}

}  // namespace

RecordFormat::RecordFormat(std::string_view spec) {
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) pieces_.push_back({0, std::move(literal)});
    literal.clear();
  };
  for (size_t i = 0; i < spec.size(); ++i) {
    char c = spec[i];
    if (c == '%') {
      if (i + 1 >= spec.size()) throw UsageError("format string ends in '%'");
      char t = spec[++i];
      if (t == '%') {
        literal.push_back('%');
        continue;
      }
      if (kTokens.find(t) == std::string_view::npos)
        throw UsageError(std::string("unknown format token %") + t + " (see --help)");
      flush();
      pieces_.push_back({t, {}});
    } else if (c == '\\') {
      if (i + 1 >= spec.size()) throw UsageError("format string ends in '\\'");
      char e = spec[++i];
      switch (e) {
        case 'n': literal.push_back('\n'); break;
        case 'r': literal.push_back('\r'); break;
        case 't': literal.push_back('\t'); break;
        case '\\': literal.push_back('\\'); break;
        case 'x': {
          int value = 0, digits = 0;
          while (digits < 2 && i + 1 < spec.size() && hex_digit(spec[i + 1]) >= 0) {
            value = value * 16 + hex_digit(spec[++i]);
            ++digits;
          }
          if (digits == 0) throw UsageError("\\x needs hex digits in the format string");
          literal.push_back(static_cast<char>(value));
          break;
        }
        default: throw UsageError(std::string("unknown escape \\") + e + " in the format string");
      }
    } else {
      literal.push_back(c);
    }
  }
  flush();
}

void RecordFormat::format(const ConsumedRecord& r, std::string& out) const {
  for (const auto& p : pieces_) {
    switch (p.token) {
      case 0: out += p.literal; break;
      case 't': out += r.topic; break;
      case 'p': out += std::to_string(r.partition); break;
      case 'o': out += std::to_string(r.offset); break;
      case 'T': out += std::to_string(r.timestamp_ms); break;
      case 'k': if (r.key) out += *r.key; break;
      case 'K': out += r.key ? std::to_string(r.key->size()) : "-1"; break;
      case 's': if (r.value) out += *r.value; break;
      case 'S': out += r.value ? std::to_string(r.value->size()) : "-1"; break;
      case 'R': append_be32(r.value ? static_cast<int32_t>(r.value->size()) : -1, out); break;
      case 'h':
        for (size_t i = 0; i < r.headers.size(); ++i) {
          if (i) out.push_back(',');
          out += r.headers[i].first;
          out.push_back('=');
          if (r.headers[i].second) out += *r.headers[i].second;
        }
        break;
    }
  }
}

}  // namespace runnel::cli
