#include "security/ssl_principal_mapper.h"

#include <cctype>

namespace runnel::security {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Reads up to the next unescaped '/' from `at`, backslash escapes kept (the
// pattern keeps them for the regex; the replacement reads them itself).
// nullopt when the text ends first.
std::optional<std::string> read_part(const std::string& text, size_t& at) {
  std::string out;
  while (at < text.size()) {
    char c = text[at];
    if (c == '/') {
      ++at;
      return out;
    }
    if (c == '\\' && at + 1 < text.size()) {
      out += text.substr(at, 2);
      at += 2;
      continue;
    }
    out += c;
    ++at;
  }
  return std::nullopt;
}

std::invalid_argument invalid(const std::string& rule, size_t at) {
  if (at >= rule.size()) return std::invalid_argument("Invalid rule: " + rule);
  return std::invalid_argument("Invalid rule: `" + rule + "`, unmatched substring: `" + rule.substr(at) + "`");
}

int count_groups(const std::string& pattern) {
  int n = 0;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      ++i;
    } else if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
    } else if (c == '(' && !(i + 1 < pattern.size() && pattern[i + 1] == '?')) {
      ++n;
    }
  }
  return n;
}

// Java's Matcher.appendReplacement: "$n" is group n (the longest number
// that names a group; Kafka treats a reference past the last group as
// literal text), "\x" is x.
void expand(const std::string& replacement, const std::smatch& m, int groups, std::string& out) {
  for (size_t i = 0; i < replacement.size(); ++i) {
    char c = replacement[i];
    if (c == '\\' && i + 1 < replacement.size()) {
      out += replacement[++i];
    } else if (c == '$' && i + 1 < replacement.size() && std::isdigit(static_cast<unsigned char>(replacement[i + 1]))) {
      size_t j = i + 1;
      int group = replacement[j++] - '0';
      while (j < replacement.size() && std::isdigit(static_cast<unsigned char>(replacement[j])) &&
             group * 10 + (replacement[j] - '0') <= groups)
        group = group * 10 + (replacement[j++] - '0');
      if (group > groups) {
        out += c;  // not a group of this pattern: literal, as Kafka escapes it
        continue;
      }
      out += m[group].str();
      i = j - 1;
    } else {
      out += c;
    }
  }
}

}  // namespace

SslPrincipalMapper::SslPrincipalMapper(const std::string& rules) : text_(rules) {
  std::string text = rules;
  while (!text.empty() && is_space(text.back())) text.pop_back();
  size_t at = 0;
  while (at < text.size() && is_space(text[at])) ++at;
  while (at < text.size()) {
    const size_t start = at;
    Rule rule;
    if (text.compare(at, 7, "DEFAULT") == 0) {
      at += 7;
    } else if (text.compare(at, 5, "RULE:") == 0) {
      at += 5;
      auto pattern = read_part(text, at);
      auto replacement = pattern ? read_part(text, at) : std::nullopt;
      if (!replacement) throw invalid(text.substr(start), text.size());
      if (at < text.size() && (text[at] == 'L' || text[at] == 'U')) rule.to_case = text[at++];
      rule.is_default = false;
      try {
        rule.pattern = std::regex(*pattern, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw std::invalid_argument("Invalid rule: " + text.substr(start) + ": " + e.what());
      }
      rule.replacement = *replacement;
      rule.groups = count_groups(*pattern);
    } else {
      throw invalid(text.substr(start), 0);
    }
    // Only spaces may follow a rule, then a comma and the next rule.
    size_t end = at;
    while (at < text.size() && is_space(text[at])) ++at;
    if (at < text.size() && text[at] != ',') {
      std::string rule_text = text.substr(start, text.find(',', at) == std::string::npos
                                                     ? std::string::npos
                                                     : text.find(',', at) - start);
      throw invalid(rule_text, end - start);
    }
    if (at < text.size()) ++at;
    while (at < text.size() && is_space(text[at])) ++at;
    rules_.push_back(std::move(rule));
  }
}

std::optional<std::string> SslPrincipalMapper::Rule::apply(const std::string& dn) const {
  if (is_default) return dn;
  if (!std::regex_match(dn, pattern)) return std::nullopt;
  // Java's String.replaceAll: every match replaced, not just the first.
  std::string out;
  auto tail = dn.cbegin();
  for (std::sregex_iterator it(dn.begin(), dn.end(), pattern), end; it != end; ++it) {
    out.append(tail, (*it)[0].first);
    expand(replacement, *it, groups, out);
    tail = (*it)[0].second;
  }
  out.append(tail, dn.cend());
  for (char& c : out) {
    if (to_case == 'L') c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (to_case == 'U') c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

std::optional<std::string> SslPrincipalMapper::name(const std::string& dn) const {
  for (const auto& r : rules_)
    if (auto n = r.apply(dn)) return n;
  return std::nullopt;
}

}  // namespace runnel::security
