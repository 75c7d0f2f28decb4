// A real `runnel serve` process for C++ compatibility tests; the same
// contract as runnel_harness.py:
//   - 127.0.0.1, port 0 on the first start, a fresh temporary log dir, plus
//     the test's --override key=value pairs;
//   - the port comes from stderr's "listening on PLAINTEXT://127.0.0.1:<port>";
//   - start() returns once a Metadata request is answered (bounded wait);
//   - stop() is SIGTERM to the pid with a bounded wait, then SIGKILL;
//     kill9() is the crash; restart() starts again on the same dir and port;
//   - stderr is piped through a reader thread into <tmp>/runnel.log
//     (appended across restarts); dump_log() prints it, and the destructor
//     does so when a failure was recorded with fail() or on an exception.
//
// Header-only, POSIX only, no dependency beyond the standard library.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace runnel::compat {

class RunnelProcess {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RunnelProcess(std::string binary, std::map<std::string, std::string> overrides = {})
      : binary_(std::move(binary)), overrides_(std::move(overrides)) {
    std::string templ = (std::filesystem::temp_directory_path() / "runnel-compat-XXXXXX").string();
    if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    tmp_ = templ;
    log_dir_ = tmp_ + "/data";
    log_path_ = tmp_ + "/runnel.log";
  }

  RunnelProcess(const RunnelProcess&) = delete;
  RunnelProcess& operator=(const RunnelProcess&) = delete;

  ~RunnelProcess() {
    bool failing = failed_ || std::uncaught_exceptions() > 0;
    if (failing) {
      kill9();
      dump_log();
    } else {
      try {
        stop();
      } catch (...) {
      }
    }
    std::error_code ec;
    if (!keep_dir_) std::filesystem::remove_all(tmp_, ec);
  }

  void start(std::chrono::seconds ready_timeout = std::chrono::seconds(30)) {
    if (pid_ > 0) throw std::runtime_error("runnel is already running");
    std::map<std::string, std::string> props = {
        {"node.id", "1"},
        {"listeners", "PLAINTEXT://127.0.0.1:" + std::to_string(port_)},
        {"log.dirs", log_dir_},
    };
    for (auto& [k, v] : overrides_) props[k] = v;
    std::vector<std::string> args = {binary_, "serve"};
    for (auto& [k, v] : props) {
      args.push_back("--override");
      args.push_back(k + "=" + v);
    }
    {
      std::ofstream log(log_path_, std::ios::app);
      log << "=== runnel start:";
      for (auto& a : args) log << ' ' << a;
      log << '\n';
    }
    {
      std::lock_guard lock(mu_);
      seen_port_ = 0;
      reader_done_ = false;
    }

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      ::dup2(fds[1], STDERR_FILENO);
      int devnull = ::open("/dev/null", O_RDWR);
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(fds[1], STDOUT_FILENO);
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
    ::close(fds[1]);
    pid_ = pid;
    reader_ = std::thread([this, fd = fds[0]] { read_stderr(fd); });

    const auto deadline = Clock::now() + ready_timeout;
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait_until(lock, deadline, [&] { return seen_port_ != 0 || reader_done_; }))
        fail("runnel did not log its listening port in time");
      if (seen_port_ == 0) {
        lock.unlock();
        fail("runnel exited before listening");
      }
      port_ = seen_port_;
    }
    std::string last;
    while (Clock::now() < deadline) {
      if (!alive()) fail("runnel exited during startup");
      if (metadata_answered(last)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    fail("runnel did not answer Metadata in time (" + last + ")");
  }

  // Graceful stop: SIGTERM, bounded wait, then SIGKILL. Returns the exit
  // status as from waitpid (-1 when not running).
  int stop(std::chrono::seconds timeout = std::chrono::seconds(30)) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    auto status = wait_for_exit(Clock::now() + timeout);
    if (!status) {
      ::kill(pid_, SIGKILL);
      status = wait_for_exit(Clock::now() + std::chrono::seconds(10));
      finish();
      fail("runnel did not stop within the timeout of SIGTERM; killed");
    }
    finish();
    return *status;
  }

  // The crash: SIGKILL, no flush, no clean-shutdown marker.
  void kill9() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    wait_for_exit(Clock::now() + std::chrono::seconds(10));
    finish();
  }

  // Stops (SIGTERM, or SIGKILL when not graceful) and starts again on the
  // same log dir and port.
  void restart(bool graceful) {
    if (graceful) {
      int status = stop();
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        fail("graceful stop did not exit 0 (status " + std::to_string(status) + ")");
    } else {
      kill9();
    }
    start();
  }

  bool alive() {
    if (pid_ <= 0) return false;
    int status;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_status_ = status;
      exited_ = true;
      finish();
      return false;
    }
    return true;
  }

  uint16_t port() const { return port_; }
  std::string bootstrap() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& log_dir() const { return log_dir_; }
  const std::string& log_path() const { return log_path_; }
  void keep_dir() { keep_dir_ = true; }

  // Marks the test failed (the destructor prints the log) and throws.
  [[noreturn]] void fail(const std::string& message) {
    failed_ = true;
    throw std::runtime_error(message);
  }
  void mark_failed() { failed_ = true; }

  void dump_log() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.size() > 200000) text = "... (cut)\n" + text.substr(text.size() - 200000);
    std::fprintf(stderr, "----- runnel stderr (%s) -----\n%s----- end of runnel stderr -----\n", log_path_.c_str(),
                 text.c_str());
  }

 private:
  void read_stderr(int fd) {
    std::ofstream log(log_path_, std::ios::app);
    std::string pending;
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      log.write(buf, n);
      log.flush();
      pending.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = pending.find('\n')) != std::string::npos) {
        std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        static const std::string marker = "listening on PLAINTEXT://127.0.0.1:";
        auto at = line.find(marker);
        if (at != std::string::npos) {
          int p = std::atoi(line.c_str() + at + marker.size());
          std::lock_guard lock(mu_);
          if (seen_port_ == 0) seen_port_ = static_cast<uint16_t>(p);
          cv_.notify_all();
        }
      }
    }
    ::close(fd);
    std::lock_guard lock(mu_);
    reader_done_ = true;
    cv_.notify_all();
  }

  std::optional<int> wait_for_exit(Clock::time_point deadline) {
    if (exited_) return exit_status_;
    while (Clock::now() < deadline) {
      int status;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exited_ = true;
        exit_status_ = status;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

  // After the process is gone: the reader thread sees EOF and ends.
  void finish() {
    if (reader_.joinable()) reader_.join();
    pid_ = -1;
    exited_ = false;
  }

  static bool read_exact(int fd, uint8_t* p, size_t n) {
    while (n > 0) {
      ssize_t r = ::recv(fd, p, n, 0);
      if (r <= 0) return false;
      p += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }

  // Metadata v1 for all topics (topics = null); true once answered.
  bool metadata_answered(std::string& why) const {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = false;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      const char client[] = "runnel-process";
      std::vector<uint8_t> req;
      auto put16 = [&](int v) { req.push_back(uint8_t(v >> 8)); req.push_back(uint8_t(v)); };
      auto put32 = [&](int32_t v) { for (int s = 24; s >= 0; s -= 8) req.push_back(uint8_t(uint32_t(v) >> s)); };
      put32(0);  // size, patched below
      put16(3);  // Metadata
      put16(1);  // v1
      put32(7);  // correlation id
      put16(int(sizeof client - 1));
      req.insert(req.end(), client, client + sizeof client - 1);
      put32(-1);  // all topics
      uint32_t size = uint32_t(req.size() - 4);
      for (int i = 0; i < 4; ++i) req[size_t(i)] = uint8_t(size >> (24 - 8 * i));
      uint8_t head[8];
      if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == ssize_t(req.size()) && read_exact(fd, head, 8)) {
        int32_t corr = int32_t(uint32_t(head[4]) << 24 | uint32_t(head[5]) << 16 | uint32_t(head[6]) << 8 | head[7]);
        ok = corr == 7;
        if (!ok) why = "wrong correlation id";
      } else {
        why = "no answer";
      }
    } else {
      why = std::strerror(errno);
    }
    ::close(fd);
    return ok;
  }

  std::string binary_;
  std::map<std::string, std::string> overrides_;
  std::string tmp_, log_dir_, log_path_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_status_ = 0;
  bool failed_ = false;
  bool keep_dir_ = false;

  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint16_t seen_port_ = 0;
  bool reader_done_ = false;
};

}  // namespace runnel::compat
