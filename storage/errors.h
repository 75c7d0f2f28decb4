// Storage outcomes: expected failures are error values, never exceptions.
//
// Every fallible storage call returns a std::error_code or a Result<T>. I/O
// failures carry the errno (std::generic_category); outcomes specific to
// Kafka logs use StorageErrc below. Exceptions are kept for broken
// invariants (a bug in Runnel, not a state of the disk or a request).
#pragma once

#include <cassert>
#include <optional>
#include <system_error>
#include <utility>

namespace runnel::storage {

enum class StorageErrc : int {
  ok = 0,
  offset_out_of_range = 1,      // before the log start offset or past the log end offset
  corrupt_record = 2,           // a batch on disk or in an append fails its framing or CRC
  invalid_record = 3,           // appended bytes are not whole RecordBatch v2 batches
  record_batch_too_large = 4,   // an append larger than segment.bytes
  invalid_config = 5,           // a topic config value Kafka would reject
  log_dir_failed = 6,           // an earlier I/O error made this log read-only
  not_found = 7,                // no such partition or file
  already_exists = 8,           // the partition is already there
  inconsistent_cluster_id = 9,  // meta.properties belongs to another cluster or node
  corrupt_checkpoint = 10,      // a checkpoint file that does not parse
  closed = 11,                  // the log was closed
  invalid_argument = 12,        // a call that breaks its contract (an aborted txn out of order)
};

const std::error_category& storage_category();
inline std::error_code make_error_code(StorageErrc e) { return {static_cast<int>(e), storage_category()}; }

// The errno of a failed call, as an error_code.
inline std::error_code errno_code(int err) { return {err, std::generic_category()}; }

// A value or the error that prevented it.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(std::error_code ec) : error_(ec) { assert(ec); }
  Result(StorageErrc e) : error_(make_error_code(e)) {}

  bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  const std::error_code& error() const { return error_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  std::error_code error_;
};

}  // namespace runnel::storage

template <>
struct std::is_error_code_enum<runnel::storage::StorageErrc> : std::true_type {};
