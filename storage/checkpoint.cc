#include "storage/checkpoint.h"

#include <charconv>

#include "storage/io.h"

namespace runnel::storage {

namespace {

constexpr int kVersion = 0;

std::string format(const std::vector<std::string>& lines) {
  std::string out = std::to_string(kVersion) + "\n" + std::to_string(lines.size()) + "\n";
  for (const auto& l : lines) out += l + "\n";
  return out;
}

template <typename T>
bool parse_num(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// The entry lines of a checkpoint, after checking version and count.
Result<std::vector<std::string_view>> parse(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  if (lines.empty()) return lines;  // empty file: no entries
  int version;
  int64_t count;
  if (!parse_num(lines[0], version) || version != kVersion) return StorageErrc::corrupt_checkpoint;
  if (lines.size() < 2 || !parse_num(lines[1], count) || count < 0) return StorageErrc::corrupt_checkpoint;
  if (static_cast<int64_t>(lines.size()) - 2 < count) return StorageErrc::corrupt_checkpoint;
  for (size_t i = 2 + static_cast<size_t>(count); i < lines.size(); ++i)
    if (!lines[i].empty()) return StorageErrc::corrupt_checkpoint;  // more entries than counted
  return std::vector<std::string_view>(lines.begin() + 2, lines.begin() + 2 + count);
}

Result<std::string> read_or_empty(const fs::path& file) {
  auto text = read_whole_file(file);
  if (!text && text.error() == std::errc::no_such_file_or_directory) return std::string();
  return text;
}

}  // namespace

std::string format_offset_checkpoint(const OffsetCheckpoint& offsets) {
  std::vector<std::string> lines;
  for (const auto& [tp, off] : offsets)
    lines.push_back(tp.topic + " " + std::to_string(tp.partition) + " " + std::to_string(off));
  return format(lines);
}

Result<OffsetCheckpoint> parse_offset_checkpoint(std::string_view text) {
  auto lines = parse(text);
  if (!lines) return lines.error();
  OffsetCheckpoint out;
  for (auto line : *lines) {
    auto f = split_fields(line);
    TopicPartition tp;
    int64_t off;
    if (f.size() != 3 || !parse_num(f[1], tp.partition) || !parse_num(f[2], off)) return StorageErrc::corrupt_checkpoint;
    tp.topic = std::string(f[0]);
    out[tp] = off;
  }
  return out;
}

std::error_code write_offset_checkpoint(const fs::path& file, const OffsetCheckpoint& offsets) {
  return write_file_atomically(file, format_offset_checkpoint(offsets));
}

Result<OffsetCheckpoint> read_offset_checkpoint(const fs::path& file) {
  auto text = read_or_empty(file);
  if (!text) return text.error();
  return parse_offset_checkpoint(*text);
}

std::string format_leader_epoch_checkpoint(const std::vector<EpochEntry>& entries) {
  std::vector<std::string> lines;
  for (const auto& e : entries) lines.push_back(std::to_string(e.epoch) + " " + std::to_string(e.start_offset));
  return format(lines);
}

Result<std::vector<EpochEntry>> parse_leader_epoch_checkpoint(std::string_view text) {
  auto lines = parse(text);
  if (!lines) return lines.error();
  std::vector<EpochEntry> out;
  for (auto line : *lines) {
    auto f = split_fields(line);
    EpochEntry e;
    if (f.size() != 2 || !parse_num(f[0], e.epoch) || !parse_num(f[1], e.start_offset)) return StorageErrc::corrupt_checkpoint;
    out.push_back(e);
  }
  return out;
}

std::error_code write_leader_epoch_checkpoint(const fs::path& file, const std::vector<EpochEntry>& entries) {
  return write_file_atomically(file, format_leader_epoch_checkpoint(entries));
}

Result<std::vector<EpochEntry>> read_leader_epoch_checkpoint(const fs::path& file) {
  auto text = read_or_empty(file);
  if (!text) return text.error();
  return parse_leader_epoch_checkpoint(*text);
}

}  // namespace runnel::storage
