#include "broker/logging.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>

namespace runnel::broker {

namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::info)};
std::mutex g_mutex;
const char* const kNames[] = {"DEBUG", "INFO", "WARN", "ERROR"};
}  // namespace

void set_log_level(LogLevel level) { g_level = static_cast<int>(level); }
bool log_enabled(LogLevel level) { return static_cast<int>(level) >= g_level; }

void log_line(LogLevel level, const char* fmt, ...) {
  if (!log_enabled(level)) return;
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm;
  gmtime_r(&secs, &tm);
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  std::lock_guard lock(g_mutex);
  std::fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %s %s\n", tm.tm_year + 1900, tm.tm_mon + 1,
               tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000),
               kNames[static_cast<int>(level)], msg);
}

}  // namespace runnel::broker
