// Kafka's SslPrincipalMapper: ssl.principal.mapping.rules turns a client
// certificate's subject DN (RFC 2253, as Java's X500Principal.getName()
// writes it) into the principal's name.
//
// Rules are tried in order, separated by commas; the first that applies wins:
//   DEFAULT                        the DN as it is
//   RULE:pattern/replacement/      when the pattern matches the whole DN, the
//   RULE:pattern/replacement/L     DN with every match replaced ($1.. are the
//   RULE:pattern/replacement/U     groups), lower- or upper-cased (L, U)
// A backslash escapes the next character ('/' or ',' inside a pattern).
// The patterns are ECMAScript regular expressions (std::regex), which agree
// with Java's for what DN rules use (groups, classes, anchors, .*?); Java's
// inline flags such as (?i) are not available.
#pragma once

#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace runnel::security {

class SslPrincipalMapper {
 public:
  // Throws std::invalid_argument with Kafka's "Invalid rule: ..." message.
  explicit SslPrincipalMapper(const std::string& rules = "DEFAULT");

  // The principal name for `dn`; nullopt when no rule applies (Kafka's
  // NoMatchingRule, which fails the connection's authentication).
  std::optional<std::string> name(const std::string& dn) const;

  const std::string& rules() const { return text_; }

 private:
  struct Rule {
    bool is_default = true;
    std::regex pattern;
    std::string replacement;
    int groups = 0;  // capturing groups in the pattern
    char to_case = 0;  // 'L', 'U' or 0
    std::optional<std::string> apply(const std::string& dn) const;
  };
  std::string text_;
  std::vector<Rule> rules_;
};

}  // namespace runnel::security
