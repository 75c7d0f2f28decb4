#include <catch2/catch.hpp>

#include "storage/checkpoint.h"
#include "storage/meta_properties.h"
#include "storage/partition_metadata.h"
#include "storage/test_util.h"
#include "storage/uuid_text.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {
std::string text_of(const fs::path& p) { return *read_whole_file(p); }
}  // namespace

TEST_CASE("offset checkpoints are Kafka's text format, byte for byte", "[storage]") {
  TempDir tmp;
  fs::path p = tmp.path / kRecoveryPointCheckpointFile;
  OffsetCheckpoint offsets{{{"orders", 0}, 1200}, {{"orders", 1}, 0}, {{"__consumer_offsets", 17}, 42}};
  REQUIRE_FALSE(write_offset_checkpoint(p, offsets));
  REQUIRE(text_of(p) == "0\n3\n__consumer_offsets 17 42\norders 0 1200\norders 1 0\n");
  REQUIRE(*read_offset_checkpoint(p) == offsets);
  REQUIRE_FALSE(fs::exists(tmp.path / "recovery-point-offset-checkpoint.tmp"));

  REQUIRE_FALSE(write_offset_checkpoint(p, {}));
  REQUIRE(text_of(p) == "0\n0\n");
  REQUIRE(read_offset_checkpoint(tmp.path / "missing")->empty());
  REQUIRE(parse_offset_checkpoint("")->empty());

  REQUIRE(parse_offset_checkpoint("1\n0\n").error() == StorageErrc::corrupt_checkpoint);
  REQUIRE(parse_offset_checkpoint("0\n2\na 0 1\n").error() == StorageErrc::corrupt_checkpoint);
  REQUIRE(parse_offset_checkpoint("0\n1\na 0\n").error() == StorageErrc::corrupt_checkpoint);
  REQUIRE(parse_offset_checkpoint("0\n1\na x 1\n").error() == StorageErrc::corrupt_checkpoint);
}

TEST_CASE("leader-epoch-checkpoint is \"epoch startOffset\" lines", "[storage]") {
  TempDir tmp;
  fs::path p = tmp.path / kLeaderEpochCheckpointFile;
  std::vector<EpochEntry> entries{{0, 0}, {3, 150}, {4, 900}};
  REQUIRE_FALSE(write_leader_epoch_checkpoint(p, entries));
  REQUIRE(text_of(p) == "0\n3\n0 0\n3 150\n4 900\n");
  REQUIRE(*read_leader_epoch_checkpoint(p) == entries);
}

TEST_CASE("partition.metadata carries the topic id in base64url", "[storage]") {
  TempDir tmp;
  runnel::protocol::Uuid id;
  for (size_t i = 0; i < 16; ++i) id.bytes[i] = static_cast<uint8_t>(i * 17);
  REQUIRE(uuid_to_base64(id) == "ABEiM0RVZneImaq7zN3u_w");
  REQUIRE(*uuid_from_base64("ABEiM0RVZneImaq7zN3u_w") == id);
  REQUIRE_FALSE(uuid_from_base64("ABEiM0RVZneImaq7zN3u_x"));  // non-zero padding bits
  REQUIRE_FALSE(write_partition_metadata(tmp.path, id));
  REQUIRE(text_of(tmp.path / "partition.metadata") == "version: 0\ntopic_id: ABEiM0RVZneImaq7zN3u_w");
  REQUIRE(*read_partition_metadata(tmp.path) == id);
  REQUIRE(read_partition_metadata(tmp.path / "nope").error() == StorageErrc::not_found);
  for (int i = 0; i < 100; ++i) {
    auto r = random_uuid();
    REQUIRE(uuid_to_base64(r)[0] != '-');
    REQUIRE(*uuid_from_base64(uuid_to_base64(r)) == r);
  }
}

TEST_CASE("meta.properties is written as a KRaft broker writes it", "[storage]") {
  TempDir tmp;
  MetaProperties m{1, "MkU3OEVBNTcwNTJENDM2Qk", 3, *uuid_from_base64("ABEiM0RVZneImaq7zN3u_w")};
  // 2024-03-12 10:15:48 UTC
  REQUIRE(format_meta_properties(m, 1710238548000) ==
          "#\n#Tue Mar 12 10:15:48 UTC 2024\nnode.id=3\ndirectory.id=ABEiM0RVZneImaq7zN3u_w\nversion=1\n"
          "cluster.id=MkU3OEVBNTcwNTJENDM2Qk\n");
  REQUIRE_FALSE(write_meta_properties(tmp.path, m));
  REQUIRE(*read_meta_properties(tmp.path) == m);
  REQUIRE(parse_meta_properties("version=1\ncluster.id=x\nnode.id=1\n")->cluster_id == "x");
  REQUIRE(parse_meta_properties("version=0\nbroker.id=1\n").error() == StorageErrc::corrupt_checkpoint);
}
