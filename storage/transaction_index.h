// The transaction index: <base offset>.txnindex, the transactions whose
// ABORT marker is in the segment, for read_committed fetches (Kafka's
// TransactionIndex and AbortedTxn).
//
//   entry (34 bytes, big-endian), repeated:
//     offset    size  field
//          0     2    version            0
//          2     8    producer id
//         10     8    first offset       of the transaction's first batch
//         18     8    last offset        the ABORT marker's offset
//         26     8    last stable offset of the partition when it aborted
//
// Entries are in marker order, so last offsets strictly increase. Unlike
// .index and .timeindex the file is not preallocated and is created by the
// first append: a segment without an aborted transaction has none, as in
// Kafka. The entries are kept in memory as well (a segment has few), so
// fetches never read the file.
//
// The entries come from the producer state, which the partition owns: a
// segment rebuilt from its .log gets an empty index here, and the partition
// appends the entries again by replaying the log (Log::txn_index_rebuild_from).
//
// Not thread-safe: the owning segment's Log serialises every call.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "storage/errors.h"
#include "storage/io.h"

namespace runnel::storage {

struct AbortedTxn {
  int64_t producer_id = -1;
  int64_t first_offset = 0;
  int64_t last_offset = 0;
  int64_t last_stable_offset = 0;
  bool operator==(const AbortedTxn&) const = default;
};

// Kafka's TxnIndexSearchResult.
struct TxnIndexSearchResult {
  std::vector<AbortedTxn> aborted;
  // No later segment can hold a transaction overlapping the range.
  bool complete = false;
};

class TransactionIndex {
 public:
  static constexpr int kEntrySize = 34;
  static constexpr int16_t kVersion = 0;

  TransactionIndex() = default;
  // Reads `path` if it exists; never creates it. A file that is not a whole
  // number of version-0 entries opens too, as far as it parses: sane() tells.
  static Result<TransactionIndex> open(const fs::path& path, int64_t start_offset);

  // Kafka's sanityCheck (a CorruptIndexException there): the file is whole
  // entries, all version 0, none ending below the segment's base offset.
  bool sane() const { return sane_; }

  // Kafka refuses an entry whose last offset is not above the previous
  // one's: invalid_argument, and nothing is written.
  std::error_code append(const AbortedTxn& txn);
  const std::vector<AbortedTxn>& all() const { return entries_; }
  // Kafka's collectAbortedTxns: the entries overlapping [fetch_offset,
  // upper_bound_offset); complete once an entry's last stable offset
  // reaches upper_bound_offset.
  TxnIndexSearchResult collect(int64_t fetch_offset, int64_t upper_bound_offset) const;
  // Drops the entries whose last offset >= `offset` (the file stays, shorter).
  std::error_code truncate_to(int64_t offset);
  // Forgets every entry and deletes the file, which the next append creates again.
  std::error_code reset();
  // Moves the file (if there is one) and names it `to` from now on.
  std::error_code rename_to(const fs::path& to);
  std::error_code flush();  // fdatasync, if the file exists
  void close() { file_.reset(); }

  const fs::path& path() const { return path_; }
  // The open file, to sync with the segment; null if there is none.
  const std::shared_ptr<FileHandle>& file() const { return file_; }

  // The file's bytes for these entries.
  static std::vector<uint8_t> encode(std::span<const AbortedTxn> entries);
  // Writes `entries` to `path` (replacing it) and fsyncs it: compaction's output.
  static std::error_code write_file(const fs::path& path, std::span<const AbortedTxn> entries);

 private:
  std::error_code open_for_append();

  fs::path path_;
  int64_t start_offset_ = 0;
  std::vector<AbortedTxn> entries_;
  std::shared_ptr<FileHandle> file_;  // open once the file exists
  bool sane_ = true;
};

}  // namespace runnel::storage
