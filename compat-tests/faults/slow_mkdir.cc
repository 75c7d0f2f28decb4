// LD_PRELOAD library for cluster_opening_leader_test.py: makes a broker slow
// to create the directory of a new partition, so that the moment between
// the metadata naming it a partition's leader and the partition being
// open (Runnel's HostedPartitions reconciles on the blocking pool) lasts
// long enough for a test to send requests into it, every time.
//
//   RUNNEL_SLOW_MKDIR_PREFIX  directory names starting with it are delayed
//   RUNNEL_SLOW_MKDIR_MS      by this many milliseconds (default 2000)
// Anything else is passed straight to libc's mkdir.
#include <dlfcn.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

bool delayed(const char* path) {
  const char* prefix = std::getenv("RUNNEL_SLOW_MKDIR_PREFIX");
  if (prefix == nullptr || *prefix == '\0' || path == nullptr) return false;
  const char* slash = std::strrchr(path, '/');
  const char* name = slash != nullptr ? slash + 1 : path;
  return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

extern "C" int mkdir(const char* path, mode_t mode) {
  using Mkdir = int (*)(const char*, mode_t);
  static const auto real = reinterpret_cast<Mkdir>(dlsym(RTLD_NEXT, "mkdir"));
  if (delayed(path)) {
    const char* ms = std::getenv("RUNNEL_SLOW_MKDIR_MS");
    std::this_thread::sleep_for(std::chrono::milliseconds(ms != nullptr ? std::atoi(ms) : 2000));
  }
  return real(path, mode);
}
