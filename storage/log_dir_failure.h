// One log dir's health (Kafka's LogDirFailureChannel): the first I/O error
// any log in the dir hits takes the whole dir offline, since a full or
// failing disk fails every partition on it. From then on its logs refuse
// appends, reads and offset lookups (KAFKA_STORAGE_ERROR), nothing new is
// created in it and it gets no clean-shutdown marker; a restart recovers it.
//
// Thread-safe: shared by the log manager and every log in the dir.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <system_error>

namespace runnel::storage {

class LogDirFailure {
 public:
  // `on_offline` hears the first error (the log manager's report).
  explicit LogDirFailure(std::function<void(std::error_code)> on_offline = {}) : on_offline_(std::move(on_offline)) {}

  // Records the first error; later ones change nothing.
  void mark_offline(std::error_code ec) {
    {
      std::lock_guard lock(mu_);
      if (offline_) return;
      error_ = ec;
      offline_ = true;
    }
    if (on_offline_) on_offline_(ec);
  }
  bool offline() const { return offline_; }
  std::error_code error() const {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  const std::function<void(std::error_code)> on_offline_;
  mutable std::mutex mu_;
  std::atomic<bool> offline_{false};
  std::error_code error_;
};

}  // namespace runnel::storage
