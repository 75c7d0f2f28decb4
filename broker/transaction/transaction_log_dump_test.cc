// Kafka 4.1.1's own DumpLogSegments --transaction-log-decoder reads a
// __transaction_state segment of the records transaction_log.h writes: an id
// through InitProducerId, AddPartitions, EndTxn and the markers under TV_2
// (v1 values), one under TV_0 (a v0 value), and a tombstone.
//
// Hidden ([.]): it needs Java and Kafka's jars, so ctest runs it through an
// entry of its own (broker/CMakeLists.txt, label interop) with
// RUNNEL_KAFKA_CLASSPATH set to what storage/interop/kafka_jars.sh prints.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "broker/testing/kafka_dump.h"
#include "broker/transaction/transaction_log.h"

using namespace runnel::broker::transaction;
using namespace runnel::broker::testing;
namespace fs = std::filesystem;

namespace {

struct Written {
  std::string transactional_id;
  std::optional<Bytes> value;  // nullopt: a tombstone
};

// Completes `r` at once, as after a replicated write, and keeps its record.
void apply(TransactionMetadata& m, const TransitResult& r, TransactionVersion level, std::vector<Written>& out) {
  REQUIRE(r.ok());
  auto value = value_to_bytes(r.value(), level);
  REQUIRE(value);
  out.push_back({m.transactional_id, std::move(value)});
  REQUIRE_FALSE(m.complete_transition_to(r.value()));
}

std::vector<Written> records() {
  std::vector<Written> out;
  TransactionMetadata a;
  a.transactional_id = "txn-a";
  a.producer_id = 1000;
  a.txn_timeout_ms = 60000;
  const auto tv2 = TransactionVersion::tv2;
  apply(a, a.prepare_increment_producer_epoch(60000, std::nullopt, 1700000000000), tv2, out);
  apply(a, a.prepare_add_partitions({{"orders", 0}, {"orders", 3}, {"audit", 1}}, 1700000000100, tv2), tv2, out);
  apply(a, a.prepare_abort_or_commit(TransactionState::prepare_commit, tv2, kNoProducerId, 1700000000200, false), tv2,
        out);
  apply(a, a.prepare_complete(1700000000300), tv2, out);

  TransactionMetadata b;
  b.transactional_id = "txn-b";
  b.producer_id = 2000;
  b.txn_timeout_ms = 30000;
  apply(b, b.prepare_increment_producer_epoch(30000, std::nullopt, 1700000000400), TransactionVersion::tv0, out);

  out.push_back({"txn-gone", std::nullopt});
  return out;
}

}  // namespace

TEST_CASE("Kafka DumpLogSegments decodes the __transaction_state records Runnel writes", "[.][kafka-dump]") {
  const char* classpath = std::getenv("RUNNEL_KAFKA_CLASSPATH");
  REQUIRE(classpath);
  const fs::path dir = fs::temp_directory_path() / ("runnel-txnlog-" + std::to_string(getpid())) / "__transaction_state-0";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir);

  const auto written = records();
  std::vector<KeyValue> log;
  for (const auto& w : written) log.push_back({key_to_bytes(w.transactional_id).value(), w.value});
  write_log(dir, log, 1700000000000);

  const std::string out =
      dump_log_segments(classpath, "--transaction-log-decoder", dir / "00000000000000000000.log");
  INFO(out);
  auto records = lines_with(out, "| offset: ");
  REQUIRE(records.size() == written.size());
  for (const auto& line : records) CHECK(line.find("\"transactionalId\":\"txn-") != std::string::npos);
  const std::pair<size_t, const char*> expected[] = {
      // txn-a, TV_2: v1 values, clientTransactionVersion 2 once AddPartitions set it.
      {0, "\"version\":\"1\""},
      {0, "\"producerId\":1000,\"producerEpoch\":0"},
      {0, "\"transactionStatus\":0"},
      {0, "\"transactionPartitions\":null"},
      {1, "\"transactionStatus\":1"},
      {1, "{\"topic\":\"audit\",\"partitionIds\":[1]}"},
      {1, "{\"topic\":\"orders\",\"partitionIds\":[0,3]}"},
      {1, "\"transactionStartTimestampMs\":1700000000100"},
      {1, "\"clientTransactionVersion\":2"},
      {2, "\"transactionStatus\":2"},
      {2, "\"producerEpoch\":1"},  // TV_2: EndTxn bumped it
      {3, "\"transactionStatus\":4"},
      {3, "\"transactionPartitions\":[]"},
      // txn-b, TV_0: a v0 value.
      {4, "\"transactionalId\":\"txn-b\""},
      {4, "\"version\":\"0\""},
      {4, "\"producerId\":2000"},
      // txn-gone: a tombstone.
      {5, "\"transactionalId\":\"txn-gone\""},
      {5, "payload: <DELETE>"},
  };
  for (auto [record, text] : expected) {
    INFO("record " << record << " has " << text);
    CHECK(records[record].find(text) != std::string::npos);
  }
  fs::remove_all(dir.parent_path());
}
