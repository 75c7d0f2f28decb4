#include "broker/admin/prometheus_text.h"

#include <charconv>
#include <cmath>

namespace runnel::broker::admin {

namespace {

// Backslash and newline always; double quote only in a label value.
std::string escape(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quotes)
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string escape_label_value(std::string_view value) { return escape(value, true); }

std::string escape_help(std::string_view help) { return escape(help, false); }

void PrometheusText::family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += escape_help(help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void PrometheusText::series(std::string_view name, std::initializer_list<Label> labels, const std::string& value,
                            std::string_view le) {
  out_ += name;
  if (labels.size() != 0 || !le.empty()) {
    out_ += '{';
    bool first = true;
    auto add = [&](std::string_view label, std::string_view label_value) {
      if (!first) out_ += ',';
      first = false;
      out_ += label;
      out_ += "=\"";
      out_ += escape_label_value(label_value);
      out_ += '"';
    };
    for (const auto& [label, label_value] : labels) add(label, label_value);
    if (!le.empty()) add("le", le);
    out_ += '}';
  }
  out_ += ' ';
  out_ += value;
  out_ += '\n';
}

void PrometheusText::sample(std::string_view name, std::initializer_list<Label> labels, int64_t value) {
  series(name, labels, std::to_string(value));
}

void PrometheusText::sample(std::string_view name, std::initializer_list<Label> labels, uint64_t value) {
  series(name, labels, std::to_string(value));
}

void PrometheusText::sample(std::string_view name, std::initializer_list<Label> labels, double value) {
  series(name, labels, format_double(value));
}

void PrometheusText::histogram(std::string_view name, std::initializer_list<Label> labels, const Histogram& h,
                               std::span<const double> bounds) {
  const std::string base(name);
  for (size_t b = 0; b <= bounds.size(); ++b) {
    const std::string le = b < bounds.size() ? format_double(bounds[b]) : "+Inf";
    series(base + "_bucket", labels, std::to_string(h.cumulative(b)), le);
  }
  series(base + "_sum", labels, format_double(h.sum()));
  series(base + "_count", labels, std::to_string(h.count(bounds)));
}

std::string format_double(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (std::isnan(value)) return "NaN";
  char buf[32];
  // Without a format, to_chars writes the shortest text that reads back the same.
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, end);
}

}  // namespace runnel::broker::admin
