// Prometheus's text exposition format, version 0.0.4 (the Content-Type
// kTextContentType names): a family is "# HELP name text" and "# TYPE name
// type" followed by its samples, one a line, `name{label="value",...} value`.
// Label values escape backslash, double quote and newline; help text
// escapes backslash and newline.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace runnel::broker::admin {

inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view help);

using Label = std::pair<std::string_view, std::string_view>;  // name (a valid label name), value

class PrometheusText {
 public:
  // Starts a family; its samples follow before the next family starts.
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, std::initializer_list<Label> labels, int64_t value);
  void sample(std::string_view name, std::initializer_list<Label> labels, uint64_t value);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void series(std::string_view name, std::initializer_list<Label> labels, const std::string& value);  // one line
  std::string out_;
};

}  // namespace runnel::broker::admin
