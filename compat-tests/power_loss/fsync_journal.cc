// LD_PRELOAD library for the power-loss test (cluster_power_loss_test.py):
// journals what a process has made durable, so that after the process is
// SIGKILLed the test can cut each file back to what a power loss would have
// left. The kernel keeps a killed process's writes in the page cache, so a
// kill alone proves nothing about fsync; dropping caches does not help
// either (dirty pages are written back, not dropped). This journal is the
// "files checked from what was fsynced" way of the issue.
//
// One tab-separated line per event, appended to $RUNNEL_FSYNC_JOURNAL with one write(2)
// on an O_APPEND descriptor (atomic for a regular file, so the broker's
// threads cannot interleave lines; a SIGKILL loses no written line):
//   S <size> <path>   fsync/fdatasync/msync succeeded; every byte below
//                     <size>, the length before the call, is durable
//   R <from> <to>     rename: what was durable at <from> now is at <to>
//   U <path>          unlink/remove: the name is gone
// Paths are absolute; the test reads lines in order (see the test's model).
// The size is taken *before* the sync: bytes appended while it runs may
// or may not be covered, so only the earlier length can be claimed.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

template <typename F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

int journal_fd() {
  static int fd = [] {
    const char* path = std::getenv("RUNNEL_FSYNC_JOURNAL");
    if (path == nullptr || *path == '\0') return -1;
    return ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  }();
  return fd;
}

void journal(const std::string& line) {
  int fd = journal_fd();
  if (fd < 0) return;
  int saved = errno;  // the caller sees the intercepted call's errno, not ours
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  errno = saved;
}

std::string fd_path(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char buf[4096];
  ssize_t n = ::readlink(link, buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string absolute(int dirfd, const char* path) {
  if (path[0] == '/') return path;
  std::string dir;
  if (dirfd == AT_FDCWD) {
    char buf[4096];
    if (::getcwd(buf, sizeof buf) == nullptr) return path;
    dir = buf;
  } else {
    dir = fd_path(dirfd);
  }
  return dir + "/" + path;
}

// The regular file's length now, or -1 (a directory, a socket, an error).
int64_t regular_size(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return st.st_size;
}

void journal_sync(int64_t size, const std::string& path) {
  if (size >= 0 && !path.empty()) journal("S\t" + std::to_string(size) + "\t" + path + "\n");
}

// The file an address is mapped from, through /proc/self/maps (msync names
// memory, not a descriptor; index files are mapped).
std::string mapped_path(const void* addr, int64_t* size) {
  auto at = reinterpret_cast<uintptr_t>(addr);
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return {};
  std::string found;
  char line[8192];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    uintptr_t lo = 0, hi = 0;
    int consumed = 0;
    if (std::sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &consumed) < 2) continue;
    if (at < lo || at >= hi) continue;
    found = line + consumed;
    while (!found.empty() && (found.back() == '\n' || found.back() == ' ')) found.pop_back();
    break;
  }
  std::fclose(maps);
  struct stat st;
  *size = (!found.empty() && found[0] == '/' && ::stat(found.c_str(), &st) == 0) ? st.st_size : -1;
  return found;
}

}  // namespace

extern "C" {

int fsync(int fd) {
  static auto real = next<int (*)(int)>("fsync");
  int64_t size = regular_size(fd);
  int rc = real(fd);
  if (rc == 0) journal_sync(size, fd_path(fd));
  return rc;
}

int fdatasync(int fd) {
  static auto real = next<int (*)(int)>("fdatasync");
  int64_t size = regular_size(fd);
  int rc = real(fd);
  if (rc == 0) journal_sync(size, fd_path(fd));
  return rc;
}

int msync(void* addr, size_t length, int flags) {
  static auto real = next<int (*)(void*, size_t, int)>("msync");
  int64_t size = -1;
  std::string path = (flags & MS_SYNC) ? mapped_path(addr, &size) : std::string();
  int rc = real(addr, length, flags);
  if (rc == 0) journal_sync(size, path);
  return rc;
}

int rename(const char* from, const char* to) {
  static auto real = next<int (*)(const char*, const char*)>("rename");
  std::string a = absolute(AT_FDCWD, from), b = absolute(AT_FDCWD, to);
  int rc = real(from, to);
  if (rc == 0) journal("R\t" + a + "\t" + b + "\n");
  return rc;
}

int renameat(int fromfd, const char* from, int tofd, const char* to) {
  static auto real = next<int (*)(int, const char*, int, const char*)>("renameat");
  std::string a = absolute(fromfd, from), b = absolute(tofd, to);
  int rc = real(fromfd, from, tofd, to);
  if (rc == 0) journal("R\t" + a + "\t" + b + "\n");
  return rc;
}

int renameat2(int fromfd, const char* from, int tofd, const char* to, unsigned int flags) {
  static auto real = next<int (*)(int, const char*, int, const char*, unsigned int)>("renameat2");
  std::string a = absolute(fromfd, from), b = absolute(tofd, to);
  int rc = real(fromfd, from, tofd, to, flags);
  if (rc == 0) journal("R\t" + a + "\t" + b + "\n");
  return rc;
}

int unlink(const char* path) {
  static auto real = next<int (*)(const char*)>("unlink");
  std::string p = absolute(AT_FDCWD, path);
  int rc = real(path);
  if (rc == 0) journal("U\t" + p + "\n");
  return rc;
}

int unlinkat(int dirfd, const char* path, int flags) {
  static auto real = next<int (*)(int, const char*, int)>("unlinkat");
  std::string p = absolute(dirfd, path);
  int rc = real(dirfd, path, flags);
  if (rc == 0) journal("U\t" + p + "\n");
  return rc;
}

// glibc's remove() calls its own unlink internally, past this library.
int remove(const char* path) {
  static auto real = next<int (*)(const char*)>("remove");
  std::string p = absolute(AT_FDCWD, path);
  int rc = real(path);
  if (rc == 0) journal("U\t" + p + "\n");
  return rc;
}

}  // extern "C"
