#include "storage/errors.h"

#include <string>

namespace runnel::storage {

namespace {

class StorageCategory : public std::error_category {
 public:
  const char* name() const noexcept override { return "runnel.storage"; }
  std::string message(int c) const override {
    switch (static_cast<StorageErrc>(c)) {
      case StorageErrc::ok: return "ok";
      case StorageErrc::offset_out_of_range: return "offset out of range";
      case StorageErrc::corrupt_record: return "corrupt record batch in the log";
      case StorageErrc::invalid_record: return "appended bytes are not valid record batches";
      case StorageErrc::record_batch_too_large: return "record batch larger than the segment size";
      case StorageErrc::invalid_config: return "invalid log config";
      case StorageErrc::log_dir_failed: return "log directory failed after an I/O error";
      case StorageErrc::not_found: return "not found";
      case StorageErrc::already_exists: return "already exists";
      case StorageErrc::inconsistent_cluster_id: return "meta.properties does not match this broker";
      case StorageErrc::corrupt_checkpoint: return "malformed checkpoint file";
      case StorageErrc::closed: return "log closed";
      case StorageErrc::invalid_argument: return "invalid argument";
    }
    return "unknown storage error";
  }
};

}  // namespace

const std::error_category& storage_category() {
  static const StorageCategory category;
  return category;
}

}  // namespace runnel::storage
