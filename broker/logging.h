// One line per event on stderr: "2026-11-29T13:45:12.345Z INFO message".
#pragma once

#include <cstdarg>
#include <cstdio>

namespace runnel::broker {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3 };

void set_log_level(LogLevel level);
bool log_enabled(LogLevel level);
void log_line(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace runnel::broker

#define RLOG_DEBUG(...) \
  do { if (::runnel::broker::log_enabled(::runnel::broker::LogLevel::debug)) ::runnel::broker::log_line(::runnel::broker::LogLevel::debug, __VA_ARGS__); } while (0)
#define RLOG_INFO(...) ::runnel::broker::log_line(::runnel::broker::LogLevel::info, __VA_ARGS__)
#define RLOG_WARN(...) ::runnel::broker::log_line(::runnel::broker::LogLevel::warn, __VA_ARGS__)
#define RLOG_ERROR(...) ::runnel::broker::log_line(::runnel::broker::LogLevel::error, __VA_ARGS__)
