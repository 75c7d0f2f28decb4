// Prometheus's text exposition format, version 0.0.4 (the Content-Type
// kTextContentType names): a family is "# HELP name text" and "# TYPE name
// type" followed by its samples, one a line, `name{label="value",...} value`.
// Label values escape backslash, double quote and newline; help text
// escapes backslash and newline.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "base/histogram.h"

namespace runnel::broker::admin {

inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view help);
// A sample value or an `le` bound: the shortest form that reads back the
// same ("0.5", "1", "+Inf").
std::string format_double(double value);

using Label = std::pair<std::string_view, std::string_view>;  // name (a valid label name), value

class PrometheusText {
 public:
  // Starts a family; its samples follow before the next family starts.
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, std::initializer_list<Label> labels, int64_t value);
  void sample(std::string_view name, std::initializer_list<Label> labels, uint64_t value);
  void sample(std::string_view name, std::initializer_list<Label> labels, double value);
  // A histogram's samples: name_bucket{labels, le} cumulative per bound and
  // +Inf, name_sum and name_count (the family is `name`, type histogram).
  void histogram(std::string_view name, std::initializer_list<Label> labels, const Histogram& h,
                 std::span<const double> bounds);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  // One line; `le` (when not empty) is appended as the last label.
  void series(std::string_view name, std::initializer_list<Label> labels, const std::string& value,
              std::string_view le = {});
  std::string out_;
};

}  // namespace runnel::broker::admin
