#include "storage/partition_metadata.h"

#include "storage/io.h"
#include "storage/uuid_text.h"

namespace runnel::storage {

std::string format_partition_metadata(const protocol::Uuid& topic_id) {
  return "version: 0\ntopic_id: " + uuid_to_base64(topic_id);
}

Result<protocol::Uuid> parse_partition_metadata(std::string_view text) {
  constexpr std::string_view kVersion = "version: ";
  constexpr std::string_view kTopicId = "topic_id: ";
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return StorageErrc::corrupt_checkpoint;
  std::string_view version = text.substr(0, nl), rest = text.substr(nl + 1);
  if (version.substr(0, kVersion.size()) != kVersion || version.substr(kVersion.size()) != "0")
    return StorageErrc::corrupt_checkpoint;
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) rest.remove_suffix(1);
  if (rest.substr(0, kTopicId.size()) != kTopicId) return StorageErrc::corrupt_checkpoint;
  auto id = uuid_from_base64(rest.substr(kTopicId.size()));
  if (!id) return StorageErrc::corrupt_checkpoint;
  return *id;
}

std::error_code write_partition_metadata(const std::filesystem::path& dir, const protocol::Uuid& topic_id) {
  return write_file_atomically(dir / kPartitionMetadataFile, format_partition_metadata(topic_id));
}

Result<protocol::Uuid> read_partition_metadata(const std::filesystem::path& dir) {
  auto text = read_whole_file(dir / kPartitionMetadataFile);
  if (!text) {
    if (text.error() == std::errc::no_such_file_or_directory) return StorageErrc::not_found;
    return text.error();
  }
  return parse_partition_metadata(*text);
}

}  // namespace runnel::storage
