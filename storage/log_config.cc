#include "storage/log_config.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <functional>

namespace runnel::storage {

namespace {

// Kafka's ConfigDef parses String.trim()'d values: every char up to ' '
// counts as white space at either end.
std::string_view trim(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  return s;
}

// ConfigDef's BOOLEAN: "true" or "false" in any case.
bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

template <typename T>
bool parse_int(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

struct Entry {
  std::string_view name;
  std::function<bool(LogConfig&, std::string_view)> set;
  std::function<std::string(const LogConfig&)> get;
};

template <typename T>
Entry int_entry(std::string_view name, T LogConfig::*field, T min) {
  return {name,
          [field, min](LogConfig& c, std::string_view v) {
            T x;
            if (!parse_int(v, x) || x < min) return false;
            c.*field = x;
            return true;
          },
          [field](const LogConfig& c) { return std::to_string(c.*field); }};
}

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      int_entry<int32_t>("segment.bytes", &LogConfig::segment_bytes, 14),
      int_entry<int64_t>("segment.ms", &LogConfig::segment_ms, 1),
      int_entry<int64_t>("segment.jitter.ms", &LogConfig::segment_jitter_ms, 0),
      int_entry<int32_t>("segment.index.bytes", &LogConfig::segment_index_bytes, 4),
      int_entry<int32_t>("index.interval.bytes", &LogConfig::index_interval_bytes, 0),
      int_entry<int64_t>("retention.ms", &LogConfig::retention_ms, -1),
      int_entry<int64_t>("retention.bytes", &LogConfig::retention_bytes, INT64_MIN),
      int_entry<int64_t>("flush.messages", &LogConfig::flush_messages, 1),
      int_entry<int64_t>("flush.ms", &LogConfig::flush_ms, 0),
      int_entry<int64_t>("file.delete.delay.ms", &LogConfig::file_delete_delay_ms, 0),
      {"message.timestamp.type",
       [](LogConfig& c, std::string_view v) {
         if (v == "CreateTime") c.message_timestamp_type = TimestampType::create_time;
         else if (v == "LogAppendTime") c.message_timestamp_type = TimestampType::log_append_time;
         else return false;
         return true;
       },
       [](const LogConfig& c) {
         return std::string(c.message_timestamp_type == TimestampType::create_time ? "CreateTime"
                                                                                   : "LogAppendTime");
       }},
      {"cleanup.policy",
       [](LogConfig& c, std::string_view v) {
         bool del = false, compact = false;
         while (!v.empty()) {
           size_t comma = v.find(',');
           std::string_view item = trim(v.substr(0, comma));
           if (item == "delete") del = true;
           else if (item == "compact") compact = true;
           else if (!item.empty()) return false;
           if (comma == std::string_view::npos) break;
           v.remove_prefix(comma + 1);
         }
         c.cleanup_delete = del;
         c.cleanup_compact = compact;
         return true;
       },
       [](const LogConfig& c) {
         if (c.cleanup_delete && c.cleanup_compact) return std::string("compact,delete");
         if (c.cleanup_compact) return std::string("compact");
         return std::string(c.cleanup_delete ? "delete" : "");
       }},
      {"preallocate",
       [](LogConfig& c, std::string_view v) {
         if (equals_ignore_case(v, "true")) c.preallocate = true;
         else if (equals_ignore_case(v, "false")) c.preallocate = false;
         else return false;
         return true;
       },
       [](const LogConfig& c) { return std::string(c.preallocate ? "true" : "false"); }},
      int_entry<int64_t>("delete.retention.ms", &LogConfig::delete_retention_ms, 0),
      {"min.cleanable.dirty.ratio",
       [](LogConfig& c, std::string_view v) {
         std::string s(v);
         char* end = nullptr;
         double d = std::strtod(s.c_str(), &end);
         if (s.empty() || *end != '\0' || d < 0 || d > 1) return false;
         c.min_cleanable_dirty_ratio = d;
         return true;
       },
       [](const LogConfig& c) {
         char buf[32];
         std::snprintf(buf, sizeof buf, "%g", c.min_cleanable_dirty_ratio);
         return std::string(buf);
       }},
      int_entry<int64_t>("min.compaction.lag.ms", &LogConfig::min_compaction_lag_ms, 0),
      int_entry<int64_t>("max.compaction.lag.ms", &LogConfig::max_compaction_lag_ms, 1),
  };
  return t;
}

}  // namespace

std::error_code LogConfig::set(std::string_view name, std::string_view value) {
  for (const auto& e : table())
    if (e.name == name)
      return e.set(*this, trim(value)) ? std::error_code() : make_error_code(StorageErrc::invalid_config);
  return make_error_code(StorageErrc::invalid_config);
}

std::string LogConfig::get(std::string_view name) const {
  for (const auto& e : table())
    if (e.name == name) return e.get(*this);
  return {};
}

Result<LogConfig> LogConfig::from_properties(const std::map<std::string, std::string>& props,
                                             const LogConfig& defaults) {
  LogConfig c = defaults;
  for (const auto& [k, v] : props)
    if (auto ec = c.set(k, v)) return ec;
  return c;
}

Result<LogConfig> LogConfig::from_properties(const std::map<std::string, std::string>& props) {
  return from_properties(props, LogConfig());
}

const std::vector<std::string_view>& LogConfig::names() {
  static const std::vector<std::string_view> n = [] {
    std::vector<std::string_view> out;
    for (const auto& e : table()) out.push_back(e.name);
    return out;
  }();
  return n;
}

}  // namespace runnel::storage
