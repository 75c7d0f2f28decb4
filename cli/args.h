// Command-line parsing for the client subcommands: each command declares its
// options (short and long names, whether they take a value, a help line),
// and parse_args turns argv into values and positionals or throws UsageError.
//
// Accepted forms: `-p 3`, `-p3`, `--partitions 3`, `--partitions=3`; a
// repeated option keeps every value in order (-c, -H, -X); `--` ends options.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace runnel::cli {

struct OptionSpec {
  char short_name = 0;      // 0: long form only
  const char* long_name;    // without the leading dashes
  const char* value_name;   // nullptr: a flag that takes no value
  const char* help;
};

class ParsedArgs {
 public:
  bool has(const std::string& long_name) const { return values_.count(long_name) > 0; }
  // The last value given, or `fallback`.
  std::string get(const std::string& long_name, const std::string& fallback = "") const;
  // Every value given, in order.
  std::vector<std::string> all(const std::string& long_name) const;
  // The last value as an integer; UsageError if it is not one.
  std::optional<int64_t> get_int(const std::string& long_name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

  void add(const std::string& long_name, std::string value) { values_[long_name].push_back(std::move(value)); }
  void add_positional(std::string p) { positionals_.push_back(std::move(p)); }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_;
};

ParsedArgs parse_args(std::span<const OptionSpec> specs, const std::vector<std::string>& args);

// "  -p, --partitions N   help" lines for `--help`.
std::string options_help(std::span<const OptionSpec> specs);

// Strict integer parsing for option values: the whole string must be a number.
int64_t parse_int(const std::string& text, const std::string& what);

// "key=value" into its halves; UsageError without '='.
std::pair<std::string, std::string> split_key_value(const std::string& text, const std::string& what);

}  // namespace runnel::cli
