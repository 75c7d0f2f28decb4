// The tokenizer is Java's StreamTokenizer as Kafka's JaasConfig sets it up:
// words of letters, digits, '.', '-', '_' and '$'; strings in '"' or '\''
// with Java's escapes; `//`, `/* */` and a lone '/' (to the end of the
// line) as comments; a token starting with a digit is a number, which has
// no string value, so `key=123` unquoted is "Value not specified" as in Kafka.
#include "security/sasl/jaas_config.h"

#include <cctype>
#include <optional>

namespace runnel::security::sasl {

namespace {

struct Token {
  enum Kind { eof, word, quoted, number, ordinary } kind = eof;
  std::string text;  // word / quoted
  char ch = 0;       // ordinary
  // StreamTokenizer's sval: words and quoted strings only.
  const std::string* sval() const { return kind == word || kind == quoted ? &text : nullptr; }
};

bool is_word_start(unsigned char c) { return std::isalpha(c) || c == '_' || c == '$' || c >= 0xA0; }
bool is_word_part(unsigned char c) { return is_word_start(c) || std::isdigit(c) || c == '.' || c == '-'; }

class Tokenizer {
 public:
  explicit Tokenizer(const std::string& text) : s_(text) {}

  Token next() {
    skip_blanks_and_comments();
    Token t;
    if (i_ >= s_.size()) return t;
    auto c = static_cast<unsigned char>(s_[i_]);
    if (std::isdigit(c) || c == '.' || c == '-') {
      // Kafka makes '-' a word character, but StreamTokenizer's number
      // parsing sees it first; either way the token has no string value.
      t.kind = Token::number;
      ++i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
      return t;
    }
    if (is_word_start(c)) {
      t.kind = Token::word;
      while (i_ < s_.size() && is_word_part(static_cast<unsigned char>(s_[i_]))) t.text += s_[i_++];
      return t;
    }
    if (c == '"' || c == '\'') return quoted(static_cast<char>(c));
    t.kind = Token::ordinary;
    t.ch = static_cast<char>(c);
    ++i_;
    return t;
  }

 private:
  void skip_blanks_and_comments() {
    while (i_ < s_.size()) {
      auto c = static_cast<unsigned char>(s_[i_]);
      if (c <= ' ') {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        size_t end = s_.find("*/", i_ + 2);
        i_ = end == std::string::npos ? s_.size() : end + 2;
      } else if (c == '/') {
        size_t end = s_.find_first_of("\r\n", i_);
        i_ = end == std::string::npos ? s_.size() : end;
      } else {
        return;
      }
    }
  }

  // Java's escapes: \n \t \r \b \f \a \v, octal \0-\377, and \<any> as itself.
  // A newline or the end of the text closes an unterminated string.
  Token quoted(char quote) {
    Token t;
    t.kind = Token::quoted;
    ++i_;
    while (i_ < s_.size() && s_[i_] != quote && s_[i_] != '\n' && s_[i_] != '\r') {
      char c = s_[i_++];
      if (c != '\\' || i_ >= s_.size()) {
        t.text += c;
        continue;
      }
      char e = s_[i_++];
      if (e >= '0' && e <= '7') {
        int value = e - '0';
        int max_digits = e <= '3' ? 2 : 1;
        for (int k = 0; k < max_digits && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7'; ++k)
          value = value * 8 + (s_[i_++] - '0');
        t.text += static_cast<char>(value);
        continue;
      }
      switch (e) {
        case 'a': t.text += '\a'; break;
        case 'b': t.text += '\b'; break;
        case 'f': t.text += '\f'; break;
        case 'n': t.text += '\n'; break;
        case 'r': t.text += '\r'; break;
        case 't': t.text += '\t'; break;
        case 'v': t.text += '\v'; break;
        default: t.text += e;
      }
    }
    if (i_ < s_.size() && s_[i_] == quote) ++i_;
    return t;
  }

  const std::string& s_;
  size_t i_ = 0;
};

std::string control_flag(const Token& t) {
  const std::string* flag = t.sval();
  if (!flag) throw JaasConfigError("Login module control flag is not available in the JAAS config");
  std::string lower;
  for (char c : *flag) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower != "required" && lower != "requisite" && lower != "sufficient" && lower != "optional")
    throw JaasConfigError("Invalid login module control flag '" + *flag + "' in JAAS config");
  return lower;
}

JaasLoginModule login_module(Tokenizer& tokens, const Token& first) {
  JaasLoginModule m;
  if (!first.sval()) throw JaasConfigError("Login module not specified in JAAS config");
  m.login_module = *first.sval();
  Token flag = tokens.next();
  if (flag.kind == Token::eof) throw JaasConfigError("Login module control flag not specified in JAAS config");
  m.control_flag = control_flag(flag);
  Token t;
  while ((t = tokens.next()).kind != Token::eof && !(t.kind == Token::ordinary && t.ch == ';')) {
    // Java's String.valueOf(null) for a key with no string value.
    std::string key = t.sval() ? *t.sval() : "null";
    Token eq = tokens.next();
    Token value = eq.kind == Token::ordinary && eq.ch == '=' ? tokens.next() : Token{};
    if (!(eq.kind == Token::ordinary && eq.ch == '=') || !value.sval())
      throw JaasConfigError("Value not specified for key '" + key + "' in JAAS config");
    m.options[key] = *value.sval();
  }
  if (t.kind == Token::eof) throw JaasConfigError("JAAS config entry not terminated by semi-colon");
  return m;
}

}  // namespace

std::vector<JaasLoginModule> parse_jaas_config(const std::string& text) {
  Tokenizer tokens(text);
  std::vector<JaasLoginModule> entries;
  for (Token t = tokens.next(); t.kind != Token::eof; t = tokens.next()) entries.push_back(login_module(tokens, t));
  if (entries.empty()) throw JaasConfigError("Login module not specified in JAAS config");
  return entries;
}

}  // namespace runnel::security::sasl
