#include "cluster/producer_id_allocator.h"

#include <charconv>

#include "cluster/errors.h"
#include "cluster/etcd/key_layout.h"

namespace runnel::cluster {

namespace {
// Claims lost in a row before giving up: each loss means another broker
// claimed a block meanwhile, so this only ends under a storm of claims.
constexpr int kMaxAttempts = 16;
}  // namespace

std::error_code ProducerIdAllocator::adopt(const KeyValue& kv) {
  int64_t end = 0;
  const char* last = kv.value.data() + kv.value.size();
  auto [p, ec] = std::from_chars(kv.value.data(), last, end);
  if (ec != std::errc() || p != last || end < 0) return std::make_error_code(std::errc::invalid_argument);
  claimed_end_ = end;
  revision_ = kv.mod_revision;
  return {};
}

awaitable<std::error_code> ProducerIdAllocator::load() {
  auto kv = co_await store_.get(keys::kProducerIds);
  if (!kv) co_return kv.error();
  if (!*kv) co_return std::error_code();
  if (auto ec = adopt(**kv)) co_return ec;
  next_ = block_end_ = claimed_end_;
  co_return std::error_code();
}

awaitable<Result<int64_t>> ProducerIdAllocator::next() {
  for (int attempt = 0; next_ >= block_end_; ++attempt) {
    if (attempt == kMaxAttempts) co_return std::error_code(ClusterErrc::unavailable);
    const int64_t start = claimed_end_;
    auto r = co_await store_.compare_and_swap(keys::kProducerIds, revision_, std::to_string(start + kBlockSize));
    if (!r) co_return r.error();
    if (!r->succeeded) {
      if (r->current.empty()) {  // deleted meanwhile: claim from what we knew
        revision_ = kAbsent;
        continue;
      }
      if (auto ec = adopt(r->current.front())) co_return ec;
      continue;
    }
    if (start + kBlockSize > claimed_end_) {
      claimed_end_ = start + kBlockSize;
      revision_ = r->revision;
    }
    // Another claim of this broker may have finished first with a later block.
    if (start + kBlockSize > block_end_) {
      next_ = start;
      block_end_ = start + kBlockSize;
    }
  }
  co_return next_++;
}

}  // namespace runnel::cluster
