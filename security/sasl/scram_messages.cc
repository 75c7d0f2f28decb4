#include "security/sasl/scram_messages.h"

#include <openssl/rand.h>

#include <charconv>
#include <stdexcept>
#include <vector>

#include "base/base64.h"
#include "security/sasl/sasl_text.h"

namespace runnel::security::sasl {

namespace {

// Kafka's classes. VALUE: [\x01-\x7F] but ','; PRINTABLE: [\x21-\x7E] but ','.
bool is_value(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c < 0x01 || c > 0x7F || c == ',') return false;
  return true;
}

bool is_printable(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c < 0x21 || c > 0x7E || c == ',') return false;
  return true;
}

// Kafka's BASE64 pattern allows the empty string; base64_decode checks the rest.
std::optional<std::string> decode_base64(std::string_view s) {
  if (s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != std::string_view::npos)
    return std::nullopt;
  return base64_decode(s);
}

// Splits on every ',' keeping empty fields, so that a stray comma fails.
std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::optional<std::string_view> attribute(std::string_view field, std::string_view name) {
  if (field.size() < name.size() + 1 || field.substr(0, name.size()) != name || field[name.size()] != '=')
    return std::nullopt;
  return field.substr(name.size() + 1);
}

// <key>=<value> with ALPHA keys and VALUE values.
bool add_extension(std::string_view field, std::map<std::string, std::string>* out) {
  size_t eq = field.find('=');
  if (eq == std::string_view::npos || !is_alpha(field.substr(0, eq)) || !is_value(field.substr(eq + 1))) return false;
  if (out) (*out)[std::string(field.substr(0, eq))] = std::string(field.substr(eq + 1));
  return true;
}

}  // namespace

std::optional<ScramClientFirstMessage> parse_scram_client_first(std::string_view message) {
  auto f = fields(message);
  if (f.size() < 4 || f[0] != "n") return std::nullopt;
  ScramClientFirstMessage m;
  if (!f[1].empty()) {
    auto authzid = attribute(f[1], "a");
    if (!authzid || !is_sasl_name(*authzid)) return std::nullopt;
    m.authorization_id = std::string(*authzid);
  }
  m.gs2_header = std::string(message.substr(0, f[0].size() + f[1].size() + 2));
  size_t i = 2;
  if (auto reserved = attribute(f[i], "m")) {
    if (!is_value(*reserved)) return std::nullopt;
    ++i;
  }
  if (i + 1 >= f.size()) return std::nullopt;
  auto name = attribute(f[i], "n");
  auto nonce = attribute(f[i + 1], "r");
  if (!name || !is_sasl_name(*name) || !nonce || !is_printable(*nonce)) return std::nullopt;
  m.bare = std::string(message.substr(static_cast<size_t>(f[i].data() - message.data())));
  m.sasl_name = std::string(*name);
  m.nonce = std::string(*nonce);
  for (i += 2; i < f.size(); ++i)
    if (!add_extension(f[i], &m.extensions)) return std::nullopt;
  return m;
}

std::string format_scram_client_first(std::string_view sasl_name, std::string_view nonce) {
  return "n,,n=" + std::string(sasl_name) + ",r=" + std::string(nonce);
}

std::optional<ScramServerFirstMessage> parse_scram_server_first(std::string_view message) {
  auto f = fields(message);
  size_t i = 0;
  if (!f.empty() && attribute(f[0], "m")) {
    if (!is_value(*attribute(f[0], "m"))) return std::nullopt;
    ++i;
  }
  if (i + 2 >= f.size()) return std::nullopt;
  auto nonce = attribute(f[i], "r");
  auto salt = attribute(f[i + 1], "s");
  auto iterations = attribute(f[i + 2], "i");
  if (!nonce || !is_printable(*nonce) || !salt || !iterations || iterations->empty()) return std::nullopt;
  auto decoded_salt = decode_base64(*salt);
  if (!decoded_salt) return std::nullopt;
  ScramServerFirstMessage m;
  auto [end, ec] = std::from_chars(iterations->data(), iterations->data() + iterations->size(), m.iterations);
  // Kafka: [0-9]+ that Integer.parseInt takes, and > 0.
  if (ec != std::errc() || end != iterations->data() + iterations->size() || (*iterations)[0] == '-' ||
      (*iterations)[0] == '+' || m.iterations <= 0)
    return std::nullopt;
  for (i += 3; i < f.size(); ++i)
    if (!add_extension(f[i], nullptr)) return std::nullopt;
  m.nonce = std::string(*nonce);
  m.salt = to_bytes(*decoded_salt);
  return m;
}

std::string format_scram_server_first(const ScramServerFirstMessage& m) {
  return "r=" + m.nonce + ",s=" + base64_encode(as_text(m.salt)) + ",i=" + std::to_string(m.iterations);
}

std::optional<ScramClientFinalMessage> parse_scram_client_final(std::string_view message) {
  auto f = fields(message);
  if (f.size() < 3) return std::nullopt;
  auto channel = attribute(f[0], "c");
  auto nonce = attribute(f[1], "r");
  auto proof = attribute(f.back(), "p");
  if (!channel || !nonce || !is_printable(*nonce) || !proof) return std::nullopt;
  for (size_t i = 2; i + 1 < f.size(); ++i)
    if (!add_extension(f[i], nullptr)) return std::nullopt;
  auto decoded_channel = decode_base64(*channel);
  auto decoded_proof = decode_base64(*proof);
  if (!decoded_channel || !decoded_proof) return std::nullopt;
  ScramClientFinalMessage m;
  m.channel_binding = std::move(*decoded_channel);
  m.nonce = std::string(*nonce);
  m.proof = to_bytes(*decoded_proof);
  m.without_proof = std::string(message.substr(0, message.size() - f.back().size() - 1));
  return m;
}

std::string scram_client_final_without_proof(std::string_view gs2_header, std::string_view nonce) {
  return "c=" + base64_encode(gs2_header) + ",r=" + std::string(nonce);
}

std::string format_scram_client_final(std::string_view without_proof, std::span<const uint8_t> proof) {
  return std::string(without_proof) + ",p=" + base64_encode(as_text(proof));
}

std::optional<ScramServerFinalMessage> parse_scram_server_final(std::string_view message) {
  ScramServerFinalMessage m;
  if (auto error = attribute(message, "e")) {
    // Kafka: VALUE_SAFE, no '=' or ',' and no extensions after it.
    if (!is_value(*error) || error->find('=') != std::string_view::npos) return std::nullopt;
    m.error = std::string(*error);
    return m;
  }
  auto f = fields(message);
  auto signature = attribute(f[0], "v");
  if (!signature) return std::nullopt;
  for (size_t i = 1; i < f.size(); ++i)
    if (!add_extension(f[i], nullptr)) return std::nullopt;
  auto decoded = decode_base64(*signature);
  if (!decoded) return std::nullopt;
  m.server_signature = to_bytes(*decoded);
  return m;
}

std::string format_scram_server_final(std::span<const uint8_t> server_signature) {
  return "v=" + base64_encode(as_text(server_signature));
}

std::optional<std::string> scram_username(std::string_view sasl_name) {
  std::string out;
  for (size_t i = 0; i < sasl_name.size(); ++i) {
    if (sasl_name[i] != '=') {
      out += sasl_name[i];
      continue;
    }
    std::string_view escape = sasl_name.substr(i, 3);
    if (escape == "=2C") out += ',';
    else if (escape == "=3D") out += '=';
    else return std::nullopt;
    i += 2;
  }
  return out;
}

std::string scram_sasl_name(std::string_view username) {
  std::string out;
  for (char c : username) {
    if (c == '=') out += "=3D";
    else if (c == ',') out += "=2C";
    else out += c;
  }
  return out;
}

std::string scram_nonce() {
  // 24 characters of 62 carry 142 bits, more than Kafka's 130; rejection
  // sampling keeps every character equally likely.
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  while (out.size() < 24) {
    uint8_t random[32];
    if (RAND_bytes(random, sizeof random) != 1) throw std::runtime_error("RAND_bytes failed");
    for (uint8_t b : random)
      if (b < 248 && out.size() < 24) out += kAlphabet[b % kAlphabet.size()];
  }
  return out;
}

std::string scram_auth_message(std::string_view client_first_bare, std::string_view server_first,
                               std::string_view client_final_without_proof) {
  std::string out(client_first_bare);
  out += ',';
  out += server_first;
  out += ',';
  out += client_final_without_proof;
  return out;
}

}  // namespace runnel::security::sasl
