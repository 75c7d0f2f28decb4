#include "broker/admin/prometheus_text.h"

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

void PrometheusText::series(std::string_view name, std::initializer_list<Label> labels, const std::string& value) {
  out_ += name;
  if (labels.size() != 0) {
    out_ += '{';
    bool first = true;
    for (const auto& [label, label_value] : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += label;
      out_ += "=\"";
      out_ += escape_label_value(label_value);
      out_ += '"';
    }
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

}  // namespace runnel::broker::admin
