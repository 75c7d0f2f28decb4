// LD_PRELOAD library for io_faults_test.py: makes the broker's chosen I/O
// calls on the files under one directory (a log dir: a failing disk) fail
// with EIO or ENOSPC from a chosen point on. Once a call has failed, every
// later matching call fails too: a disk that failed stays failed, as the
// broker must assume (Kafka's LogDirFailureChannel).
//
//   RUNNEL_IO_FAULT_DIR    absolute path: only files under it are affected
//   RUNNEL_IO_FAULT_CALLS  comma-separated: open write pwrite fallocate
//                          ftruncate fdatasync fsync rename
//   RUNNEL_IO_FAULT_ERRNO  EIO (default) or ENOSPC
//   RUNNEL_IO_FAULT_ARM    a path: nothing fails until it exists (the test
//                          creates it once its setup is done)
//   RUNNEL_IO_FAULT_SKIP   matching calls let through after arming before
//                          the first failure (the test draws it from a seed)
//   RUNNEL_IO_FAULT_LOG    file that gets one line per failed call, so the
//                          test knows the fault fired and on what
// Without RUNNEL_IO_FAULT_DIR every call passes straight through.
//
// Not instrumented (add_preloaded_test builds it without sanitizers): it
// sits ahead of ASan's runtime in the broker's libraries.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

template <typename F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

struct Settings {
  std::string dir;  // with a trailing '/'
  std::string calls;
  int error = EIO;
  std::string arm;
  long skip = 0;
  int log_fd = -1;
};

const Settings& settings() {
  static const Settings s = [] {
    Settings out;
    if (const char* d = std::getenv("RUNNEL_IO_FAULT_DIR"); d && *d) {
      out.dir = d;
      if (out.dir.back() != '/') out.dir += '/';
    }
    if (const char* c = std::getenv("RUNNEL_IO_FAULT_CALLS")) out.calls = std::string(",") + c + ",";
    if (const char* e = std::getenv("RUNNEL_IO_FAULT_ERRNO"); e && std::strcmp(e, "ENOSPC") == 0) out.error = ENOSPC;
    if (const char* a = std::getenv("RUNNEL_IO_FAULT_ARM")) out.arm = a;
    if (const char* k = std::getenv("RUNNEL_IO_FAULT_SKIP")) out.skip = std::strtol(k, nullptr, 10);
    if (const char* l = std::getenv("RUNNEL_IO_FAULT_LOG"); l && *l) {
      using open_fn = int (*)(const char*, int, ...);
      out.log_fd = next<open_fn>("open")(l, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
    return out;
  }();
  return s;
}

std::atomic<bool> armed{false};
std::atomic<long> passed{0};  // matching calls let through since arming
std::atomic<bool> failing{false};

bool under_dir(const char* path) {
  const Settings& s = settings();
  return path != nullptr && std::strncmp(path, s.dir.c_str(), s.dir.size()) == 0;
}

std::string fd_path(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char target[4096];
  ssize_t n = ::readlink(link, target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

bool listed(const char* call) {
  const Settings& s = settings();
  return !s.dir.empty() && s.calls.find(std::string(",") + call + ",") != std::string::npos;
}

// Whether this call on `path` fails; if so errno is set for the caller.
bool inject(const char* call, const char* path) {
  const Settings& s = settings();
  if (!listed(call) || !under_dir(path)) return false;
  const int saved = errno;
  if (!armed.load()) {
    if (s.arm.empty() || ::access(s.arm.c_str(), F_OK) != 0) {
      errno = saved;
      return false;
    }
    armed.store(true);
  }
  if (!failing.load() && passed.fetch_add(1) < s.skip) {
    errno = saved;
    return false;
  }
  failing.store(true);
  if (s.log_fd >= 0) {
    char line[4200];
    int n = std::snprintf(line, sizeof line, "%s\t%s\t%s\n", call, s.error == ENOSPC ? "ENOSPC" : "EIO", path);
    if (n > 0) {
      ssize_t w = next<ssize_t (*)(int, const void*, size_t)>("write")(s.log_fd, line, static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1);
      (void)w;
    }
  }
  errno = s.error;
  return true;
}

bool inject_fd(const char* call, int fd) {
  if (!listed(call)) return false;
  const int saved = errno;
  std::string path = fd_path(fd);
  errno = saved;
  return inject(call, path.c_str());
}

mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (inject("open", path)) return -1;
  return next<int (*)(const char*, int, ...)>("open")(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (inject("open", path)) return -1;
  return next<int (*)(const char*, int, ...)>("open64")(path, flags, mode);
}

ssize_t write(int fd, const void* buf, size_t n) {
  if (inject_fd("write", fd)) return -1;
  return next<ssize_t (*)(int, const void*, size_t)>("write")(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  if (inject_fd("pwrite", fd)) return -1;
  return next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite")(fd, buf, n, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t offset) {
  if (inject_fd("pwrite", fd)) return -1;
  return next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite64")(fd, buf, n, offset);
}

// posix_fallocate returns the error instead of setting errno.
int posix_fallocate(int fd, off_t offset, off_t len) {
  if (inject_fd("fallocate", fd)) return errno;
  return next<int (*)(int, off_t, off_t)>("posix_fallocate")(fd, offset, len);
}

int posix_fallocate64(int fd, off_t offset, off_t len) {
  if (inject_fd("fallocate", fd)) return errno;
  return next<int (*)(int, off_t, off_t)>("posix_fallocate64")(fd, offset, len);
}

int ftruncate(int fd, off_t size) {
  if (inject_fd("ftruncate", fd)) return -1;
  return next<int (*)(int, off_t)>("ftruncate")(fd, size);
}

int fdatasync(int fd) {
  if (inject_fd("fdatasync", fd)) return -1;
  return next<int (*)(int)>("fdatasync")(fd);
}

int fsync(int fd) {
  if (inject_fd("fsync", fd)) return -1;
  return next<int (*)(int)>("fsync")(fd);
}

int rename(const char* from, const char* to) {
  if (inject("rename", from)) return -1;
  return next<int (*)(const char*, const char*)>("rename")(from, to);
}

}  // extern "C"
