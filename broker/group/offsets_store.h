// Where the group coordinator's records go: the partitions of
// __consumer_offsets, as key and value in Kafka's formats (offsets_format.h).
// Both the group manager and the offset manager write through it.
//
// An append completes asynchronously, as Kafka's coordinator writes do: its
// callback runs once the records are as durable as an acks=all produce (on
// one broker after the local append and, with runnel.acks.all.fsync, its
// fsync; with replication once the high watermark passes them). It may run
// before append() returns or later, always on the coordinator's thread. A
// caller applies its change in the callback and re-checks the group there:
// it may have moved on meanwhile (Kafka's storeGroup / storeOffsets callbacks).
//
// A TxnOffsetCommit's records are written as a transactional batch of the
// producer (Kafka's scheduleTransactionalWriteOperation): the partition
// checks its epoch, and the transaction's marker on the partition later
// commits or aborts them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <system_error>
#include <vector>

#include "protocol/codec/types.h"
#include "protocol/error_codes.h"

namespace runnel::broker::group {

using protocol::Bytes;

// One __consumer_offsets record: key and value (nullopt = tombstone).
struct OffsetsRecord {
  Bytes key;
  std::optional<Bytes> value;
};

using AppendDone = std::function<void(std::error_code)>;

struct TxnProducer {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
};

struct Written {
  protocol::ErrorCode error = protocol::ErrorCode::none;  // the partition's answer
  int64_t base_offset = -1;  // the first record's offset in the log, when written
};
using WriteDone = std::function<void(Written)>;

class OffsetsStore {
 public:
  virtual ~OffsetsStore() = default;
  // Appends the records as one batch to the partition, transactional when
  // `producer` is given; `done` runs once.
  virtual void write(int32_t partition, std::vector<OffsetsRecord> records, std::optional<TxnProducer> producer,
                     WriteDone done) = 0;
  // write() for who needs only whether it worked.
  void append(int32_t partition, std::vector<OffsetsRecord> records, AppendDone done) {
    write(partition, std::move(records), std::nullopt, [done = std::move(done)](Written w) {
      done(w.error == protocol::ErrorCode::none ? std::error_code{} : std::make_error_code(std::errc::io_error));
    });
  }
};

}  // namespace runnel::broker::group
