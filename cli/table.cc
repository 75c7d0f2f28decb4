#include "cli/table.h"

#include <algorithm>
#include <cstdio>

#include "cli/kafka_errors.h"

namespace runnel::cli {

std::string Table::render() const {
  std::vector<size_t> width(headers_.size());
  for (size_t i = 0; i < headers_.size(); ++i) width[i] = headers_[i].size();
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string& c = i < cells.size() ? cells[i] : std::string();
      l += c;
      if (i + 1 < width.size()) l += std::string(width[i] - c.size() + 2, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(headers_);
  for (const auto& r : rows_) line(r);
  return out;
}

std::string join_ints(const std::vector<int32_t>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

void print_json(const boost::json::value& value) {
  std::string s = boost::json::serialize(value);
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
}

bool wants_json(const std::string& output_option) {
  if (output_option.empty() || output_option == "text") return false;
  if (output_option == "json") return true;
  throw UsageError("--output takes text or json, got '" + output_option + "'");
}

}  // namespace runnel::cli
