#include "cli/args.h"

#include <cctype>
#include <charconv>

#include "cli/kafka_errors.h"

namespace runnel::cli {

std::string ParsedArgs::get(const std::string& long_name, const std::string& fallback) const {
  auto it = values_.find(long_name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> ParsedArgs::all(const std::string& long_name) const {
  auto it = values_.find(long_name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<int64_t> ParsedArgs::get_int(const std::string& long_name) const {
  if (!has(long_name)) return std::nullopt;
  return parse_int(get(long_name), "--" + long_name);
}

int64_t parse_int(const std::string& text, const std::string& what) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw UsageError(what + " takes an integer, got '" + text + "'");
  return v;
}

std::pair<std::string, std::string> split_key_value(const std::string& text, const std::string& what) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError(what + " takes key=value, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

ParsedArgs parse_args(std::span<const OptionSpec> specs, const std::vector<std::string>& args) {
  ParsedArgs out;
  auto by_long = [&](std::string_view name) -> const OptionSpec* {
    for (const auto& s : specs)
      if (name == s.long_name) return &s;
    return nullptr;
  };
  auto by_short = [&](char c) -> const OptionSpec* {
    for (const auto& s : specs)
      if (s.short_name == c) return &s;
    return nullptr;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      for (++i; i < args.size(); ++i) out.add_positional(args[i]);
      break;
    }
    // A lone "-" and negative numbers ("-5" as an offset value) are not options.
    bool looks_numeric = a.size() > 1 && a[0] == '-' && std::isdigit(static_cast<unsigned char>(a[1]));
    if (a.size() < 2 || a[0] != '-' || looks_numeric) {
      out.add_positional(a);
      continue;
    }
    const OptionSpec* spec = nullptr;
    std::optional<std::string> inline_value;
    std::string shown;
    if (a[1] == '-') {
      std::string name = a.substr(2);
      auto eq = name.find('=');
      if (eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
      }
      spec = by_long(name);
      shown = "--" + name;
    } else {
      spec = by_short(a[1]);
      if (a.size() > 2) inline_value = a.substr(2);
      shown = a.substr(0, 2);
    }
    if (!spec) throw UsageError("unknown option " + shown + " (see --help)");
    if (!spec->value_name) {
      if (inline_value) throw UsageError(shown + " takes no value");
      out.add(spec->long_name, "");
      continue;
    }
    if (inline_value) {
      out.add(spec->long_name, *inline_value);
    } else {
      if (i + 1 >= args.size()) throw UsageError(shown + " needs a value (" + spec->value_name + ")");
      out.add(spec->long_name, args[++i]);
    }
  }
  return out;
}

std::string options_help(std::span<const OptionSpec> specs) {
  std::string out;
  for (const auto& s : specs) {
    std::string left = "  ";
    left += s.short_name ? std::string("-") + s.short_name + ", " : std::string("    ");
    left += std::string("--") + s.long_name;
    if (s.value_name) left += std::string(" ") + s.value_name;
    if (left.size() < 30) left.resize(30, ' ');
    else left += "\n" + std::string(30, ' ');
    out += left + s.help + "\n";
  }
  return out;
}

}  // namespace runnel::cli
