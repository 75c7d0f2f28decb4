// Test helper: a real etcd (Debian's etcd-server) on free loopback ports
// with a fresh data dir, started by the test and stopped by its pid (never
// by name), every wait bounded; it is killed too if the test process
// dies first. For the C++ cluster tests; Python tests
// can start the same command line (args()).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifndef RUNNEL_ETCD_BINARY
#define RUNNEL_ETCD_BINARY "/usr/bin/etcd"
#endif

namespace runnel::cluster::testing {

// A port nothing listens on right now (bound and released).
inline uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("no free port");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

class EtcdProcess {
 public:
  explicit EtcdProcess(std::chrono::seconds ready_within = std::chrono::seconds(20)) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "runnel-etcd-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    // A port taken between free_port() and etcd's bind fails the start: retry.
    for (int attempt = 0; attempt < 3 && pid_ <= 0; ++attempt) {
      client_port_ = free_port();
      peer_port_ = free_port();
      start();
      if (!wait_ready(ready_within)) stop();
    }
    if (pid_ <= 0) throw std::runtime_error("etcd did not start; see " + (dir_ / "etcd.log").string());
  }
  ~EtcdProcess() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(client_port_); }
  uint16_t client_port() const { return client_port_; }
  pid_t pid() const { return pid_; }

  std::vector<std::string> args() const {
    const std::string client = endpoint();
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
    return {RUNNEL_ETCD_BINARY,
            "--data-dir", (dir_ / "data").string(),
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", "default=" + peer};
  }

  // SIGTERM, then SIGKILL if it has not exited within 5 s.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
  }

 private:
  void start() {
    auto a = args();
    const std::string log = (dir_ / "etcd.log").string();
    pid_ = ::fork();
    if (pid_ == 0) {
      // A test that crashes takes its etcd with it.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      std::vector<char*> argv;
      for (auto& s : a) argv.push_back(s.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }

  // Ready when /health says so.
  bool wait_ready(std::chrono::seconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      if (healthy()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  bool healthy() const {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(client_port_);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string answer;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      const std::string req = "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
      if (::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
        char buf[512];
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0) answer.append(buf, static_cast<size_t>(n));
      }
    }
    ::close(fd);
    return answer.find("\"health\":\"true\"") != std::string::npos;
  }

  std::filesystem::path dir_;
  uint16_t client_port_ = 0;
  uint16_t peer_port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace runnel::cluster::testing
