#include "cluster/metadata_store.h"

#include "cluster/errors.h"

namespace runnel::cluster {

namespace {

class Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "runnel.cluster"; }
  std::string message(int e) const override {
    switch (static_cast<ClusterErrc>(e)) {
      case ClusterErrc::lease_not_found: return "requested lease not found";
      case ClusterErrc::compacted: return "required revision has been compacted";
      case ClusterErrc::unavailable: return "no metadata store endpoint available";
      case ClusterErrc::bad_response: return "malformed answer from the metadata store";
      case ClusterErrc::corrupt_file: return "corrupt metadata file";
    }
    return "unknown cluster error";
  }
};

}  // namespace

const std::error_category& cluster_category() {
  static Category c;
  return c;
}

std::string prefix_end(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return end;  // "" or all 0xff: to the end of the key space
}

awaitable<Result<TxnResult>> MetadataStore::compare_and_swap(std::string key, Revision expected,
                                                             std::optional<std::string> value) {
  Txn txn;
  txn.compares.push_back({key, expected});
  txn.ops.push_back(value ? Op::put(std::move(key), std::move(*value)) : Op::erase(std::move(key)));
  co_return co_await commit(std::move(txn));
}

awaitable<Result<Revision>> MetadataStore::put(std::string key, std::string value, LeaseId lease) {
  Txn txn;
  txn.ops.push_back(Op::put(std::move(key), std::move(value), lease));
  auto r = co_await commit(std::move(txn));
  if (!r) co_return r.error();
  co_return r->revision;
}

awaitable<Result<Revision>> MetadataStore::erase(std::string key) {
  Txn txn;
  txn.ops.push_back(Op::erase(std::move(key)));
  auto r = co_await commit(std::move(txn));
  if (!r) co_return r.error();
  co_return r->revision;
}

}  // namespace runnel::cluster
