// One metadata key holding one JSON document that every broker applies
// (the SCRAM credentials, the client quotas): read at startup, changed by
// compare-and-swap from any broker, and applied again on each broker from
// its metadata watch (ClusterMember's hooks), as Kafka's brokers replay the
// controller's records; on a single node the key is one file beside the
// topics (cluster/local_metadata_store.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <system_error>

#include "broker/asio.h"
#include "broker/logging.h"
#include "cluster/errors.h"
#include "cluster/metadata_store.h"

namespace runnel::broker {

template <typename T>
class StoredDocument {
 public:
  using Encode = std::string (*)(const T&);
  using Decode = std::optional<T> (*)(const std::string&);

  // `what` names the document in log lines ("SCRAM credentials").
  StoredDocument(cluster::MetadataStore& store, const char* key, const char* what, Encode encode, Decode decode)
      : store_(store), key_(key), what_(what), encode_(encode), decode_(decode) {}

  // Called after each new value is applied (on the event loop).
  void on_applied(std::function<void()> fn) { on_applied_ = std::move(fn); }

  // Reads the stored document (at startup, before serving).
  awaitable<std::error_code> load() {
    auto kv = co_await store_.get(key_);
    if (!kv) co_return kv.error();
    if (!*kv) co_return std::error_code{};
    auto stored = decode_((*kv)->value);
    if (!stored) co_return make_error_code(cluster::ClusterErrc::corrupt_file);
    RLOG_INFO("%s loaded (%zu entries)", what_, stored->size());
    apply(std::move(*stored), (*kv)->mod_revision);
    co_return std::error_code{};
  }

  // The stored value at `revision` (nullopt: the key was deleted), as a
  // watch delivers it; an older revision than the one applied is ignored,
  // and a value that does not decode is ignored with a warning.
  void stored_changed(const std::optional<std::string>& value, cluster::Revision revision) {
    if (!value) {
      apply(T{}, revision);
      return;
    }
    auto stored = decode_(*value);
    if (!stored) {
      RLOG_WARN("ignoring stored %s at revision %lld: they do not decode", what_, static_cast<long long>(revision));
      return;
    }
    apply(std::move(*stored), revision);
  }

  const T& value() const { return value_; }

  // Edits the document in one write: reads the stored one, lets `change`
  // edit a copy, writes it back conditioned on the read (asking `change`
  // again, on the new stored one, when another broker wrote in between),
  // then applies it. `change` judges what is stored, as Kafka's controller
  // judges its current image.
  using Change = std::function<void(T& value)>;
  awaitable<std::error_code> alter(Change change) {
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      auto kv = co_await store_.get(key_);
      if (!kv) co_return kv.error();
      T current{};
      cluster::Revision expected = cluster::kAbsent;
      if (*kv) {
        auto decoded = decode_((*kv)->value);
        if (!decoded) co_return make_error_code(cluster::ClusterErrc::corrupt_file);
        current = std::move(*decoded);
        expected = (*kv)->mod_revision;
      }
      T next = current;
      change(next);
      std::erase_if(next, [](const auto& entry) { return entry.second.empty(); });
      if (next == current) {
        // Nothing to write, but this broker may not have heard of the stored
        // value yet (another broker's write still on its way through the watch).
        if (*kv) apply(std::move(current), expected);
        co_return std::error_code{};
      }
      auto written = co_await store_.compare_and_swap(key_, expected, encode_(next));
      if (!written) co_return written.error();
      if (!written->succeeded) continue;
      apply(std::move(next), written->revision);
      co_return std::error_code{};
    }
    co_return make_error_code(cluster::ClusterErrc::unavailable);
  }

 private:
  // A compare-and-swap lost to another broker's write is retried; this many
  // losses in a row fail the request (as AclManager's).
  static constexpr int kAttempts = 20;

  void apply(T value, cluster::Revision revision) {
    // A watch event can arrive after this broker applied its own later write.
    if (revision < revision_) return;
    revision_ = revision;
    value_ = std::move(value);
    if (on_applied_) on_applied_();
  }

  cluster::MetadataStore& store_;
  const char* key_;
  const char* what_;
  Encode encode_;
  Decode decode_;
  T value_{};
  cluster::Revision revision_ = -1;
  std::function<void()> on_applied_;
};

}  // namespace runnel::broker
