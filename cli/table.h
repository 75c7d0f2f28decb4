// Output for people and for scripts: an aligned text table (columns padded
// to their widest cell, two spaces apart) or, with `-o json`, Boost.JSON.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

namespace runnel::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // The table with a header line; no trailing spaces.
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// "1,2,3" for replica and ISR lists.
std::string join_ints(const std::vector<int32_t>& v, const char* sep = ",");

// Writes `value` as one line of JSON to stdout.
void print_json(const boost::json::value& value);

// Whether --output/-o asks for JSON; UsageError for anything but text|json.
bool wants_json(const std::string& output_option);

}  // namespace runnel::cli
