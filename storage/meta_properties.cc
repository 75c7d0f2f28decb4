#include "storage/meta_properties.h"

#include <charconv>
#include <ctime>

#include "base/clock.h"
#include "storage/io.h"
#include "storage/uuid_text.h"

namespace runnel::storage {

std::string format_meta_properties(const MetaProperties& m, int64_t now_ms) {
  std::time_t t = static_cast<std::time_t>(now_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[64];
  std::strftime(date, sizeof date, "%a %b %d %H:%M:%S UTC %Y", &tm);
  std::string out = "#\n#";
  out += date;
  out += "\nnode.id=" + std::to_string(m.node_id) + "\n";
  out += "directory.id=" + uuid_to_base64(m.directory_id) + "\n";
  out += "version=" + std::to_string(m.version) + "\n";
  out += "cluster.id=" + m.cluster_id + "\n";
  return out;
}

Result<MetaProperties> parse_meta_properties(std::string_view text) {
  std::map<std::string, std::string, std::less<>> props;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty() || line[0] == '#' || line[0] == '!') continue;
    size_t eq = line.find_first_of("=:");
    if (eq == std::string_view::npos) return StorageErrc::corrupt_checkpoint;
    props[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  MetaProperties m;
  auto get = [&](std::string_view k) -> const std::string* {
    auto it = props.find(k);
    return it == props.end() ? nullptr : &it->second;
  };
  auto num = [](const std::string& s, auto& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  const std::string *version = get("version"), *cluster = get("cluster.id"), *node = get("node.id");
  if (!version || !num(*version, m.version) || m.version != 1) return StorageErrc::corrupt_checkpoint;
  if (!cluster || !node || !num(*node, m.node_id)) return StorageErrc::corrupt_checkpoint;
  m.cluster_id = *cluster;
  if (const std::string* dir = get("directory.id")) {
    auto id = uuid_from_base64(*dir);
    if (!id) return StorageErrc::corrupt_checkpoint;
    m.directory_id = *id;
  }
  return m;
}

std::error_code write_meta_properties(const std::filesystem::path& log_dir, const MetaProperties& m) {
  return write_file_atomically(log_dir / kMetaPropertiesFile, format_meta_properties(m, Clock::system().wall_ms()));
}

Result<MetaProperties> read_meta_properties(const std::filesystem::path& log_dir) {
  auto text = read_whole_file(log_dir / kMetaPropertiesFile);
  if (!text) {
    if (text.error() == std::errc::no_such_file_or_directory) return StorageErrc::not_found;
    return text.error();
  }
  return parse_meta_properties(*text);
}

}  // namespace runnel::storage
