#include "storage/transaction_index.h"

#include <fcntl.h>

#include "storage/index_file.h"

namespace runnel::storage {

namespace {

void encode_entry(const AbortedTxn& t, uint8_t* p) {
  p[0] = static_cast<uint8_t>(static_cast<uint16_t>(TransactionIndex::kVersion) >> 8);
  p[1] = static_cast<uint8_t>(TransactionIndex::kVersion);
  store_be64(p + 2, static_cast<uint64_t>(t.producer_id));
  store_be64(p + 10, static_cast<uint64_t>(t.first_offset));
  store_be64(p + 18, static_cast<uint64_t>(t.last_offset));
  store_be64(p + 26, static_cast<uint64_t>(t.last_stable_offset));
}

int16_t entry_version(const uint8_t* p) { return static_cast<int16_t>((p[0] << 8) | p[1]); }

AbortedTxn decode_entry(const uint8_t* p) {
  return {static_cast<int64_t>(load_be64(p + 2)), static_cast<int64_t>(load_be64(p + 10)),
          static_cast<int64_t>(load_be64(p + 18)), static_cast<int64_t>(load_be64(p + 26))};
}

}  // namespace

Result<TransactionIndex> TransactionIndex::open(const fs::path& path, int64_t start_offset) {
  TransactionIndex index;
  index.path_ = path;
  index.start_offset_ = start_offset;
  auto bytes = read_whole_file(path);
  if (!bytes) {
    if (bytes.error() == std::errc::no_such_file_or_directory) return index;
    return bytes.error();
  }
  const auto* p = reinterpret_cast<const uint8_t*>(bytes->data());
  size_t whole = bytes->size() / kEntrySize;
  index.sane_ = bytes->size() % kEntrySize == 0;
  for (size_t n = 0; n < whole && index.sane_; ++n, p += kEntrySize) {
    AbortedTxn t = decode_entry(p);
    index.sane_ = entry_version(p) == kVersion && t.last_offset >= start_offset;
    index.entries_.push_back(t);
  }
  if (auto ec = index.open_for_append()) return ec;
  return index;
}

std::error_code TransactionIndex::open_for_append() {
  if (file_) return {};
  auto f = FileHandle::open(path_, O_RDWR | O_CREAT);
  if (!f) return f.error();
  file_ = std::make_shared<FileHandle>(std::move(*f));
  return {};
}

std::error_code TransactionIndex::append(const AbortedTxn& txn) {
  if (!entries_.empty() && txn.last_offset <= entries_.back().last_offset) return StorageErrc::invalid_argument;
  if (auto ec = open_for_append()) return ec;
  uint8_t buf[kEntrySize];
  encode_entry(txn, buf);
  int64_t at = static_cast<int64_t>(entries_.size()) * kEntrySize;
  if (auto ec = pwrite_all(file_->fd(), buf, sizeof buf, at)) {
    (void)truncate_fd(file_->fd(), at);  // no torn entry for the next open to find
    return ec;
  }
  entries_.push_back(txn);
  return {};
}

TxnIndexSearchResult TransactionIndex::collect(int64_t fetch_offset, int64_t upper_bound_offset) const {
  TxnIndexSearchResult out;
  for (const auto& t : entries_) {
    if (t.last_offset >= fetch_offset && t.first_offset < upper_bound_offset) out.aborted.push_back(t);
    if (t.last_stable_offset >= upper_bound_offset) {
      out.complete = true;
      break;
    }
  }
  return out;
}

std::error_code TransactionIndex::truncate_to(int64_t offset) {
  size_t keep = 0;
  while (keep < entries_.size() && entries_[keep].last_offset < offset) ++keep;
  if (keep == entries_.size()) return {};
  if (auto ec = truncate_fd(file_->fd(), static_cast<int64_t>(keep) * kEntrySize)) return ec;
  entries_.resize(keep);
  return {};
}

std::error_code TransactionIndex::reset() {
  file_.reset();
  entries_.clear();
  sane_ = true;
  return remove_if_exists(path_);
}

std::error_code TransactionIndex::rename_to(const fs::path& to) {
  std::error_code ec;
  if (file_ || fs::exists(path_, ec)) ec = rename_path(path_, to);
  path_ = to;
  return ec;
}

std::error_code TransactionIndex::flush() { return file_ ? datasync_fd(file_->fd()) : std::error_code(); }

std::vector<uint8_t> TransactionIndex::encode(std::span<const AbortedTxn> entries) {
  std::vector<uint8_t> out(entries.size() * kEntrySize);
  for (size_t n = 0; n < entries.size(); ++n) encode_entry(entries[n], out.data() + n * kEntrySize);
  return out;
}

std::error_code TransactionIndex::write_file(const fs::path& path, std::span<const AbortedTxn> entries) {
  auto f = FileHandle::open(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (!f) return f.error();
  auto bytes = encode(entries);
  if (auto ec = pwrite_all(f->fd(), bytes.data(), bytes.size(), 0)) return ec;
  return datasync_fd(f->fd());
}

}  // namespace runnel::storage
