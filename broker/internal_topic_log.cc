#include "broker/internal_topic_log.h"

#include "broker/broker.h"
#include "broker/logging.h"
#include "protocol/records/batch_reader.h"
#include "protocol/records/control_record.h"
#include "protocol/records/validate.h"
#include "storage/io.h"

namespace runnel::broker {

namespace rec = protocol::records;

std::function<KeyedRecords()> read_keyed_records(std::shared_ptr<storage::Log> log) {
  return [log] {
    KeyedRecords out;
    int64_t offset = log->log_start_offset();
    const int64_t end = log->log_end_offset();
    while (offset < end) {
      auto info = log->read(offset, 4 << 20, end);
      if (!info) {
        out.error = info.error().message();
        break;
      }
      const auto& region = info->records;
      if (region.length <= 0) break;
      protocol::Bytes buf(static_cast<size_t>(region.length));
      auto n = storage::pread_full(region.fd, buf.data(), buf.size(), region.offset);
      if (!n || *n != buf.size()) {
        out.error = n ? "short read" : n.error().message();
        break;
      }
      rec::BatchIterator it(protocol::ByteView(buf.data(), buf.size()));
      int64_t next = offset;
      while (auto batch = it.next()) {
        next = batch->header.last_offset() + 1;
        const auto& h = batch->header;
        if (h.is_control()) {
          if (auto m = rec::read_end_txn_marker(batch->bytes, h))
            out.records.push_back({h.base_offset, h.producer_id, m->type == rec::ControlRecordType::commit, {}, {}});
          continue;
        }
        rec::BatchRecordReader reader(batch->bytes, rec::kDefaultMaxDecompressedBytes);
        rec::Record r;
        while (reader.next(r)) {
          if (!r.key) continue;
          KeyedRecord kr{h.base_offset + r.offset_delta, h.is_transactional() ? h.producer_id : -1, std::nullopt,
                         protocol::Bytes(r.key->begin(), r.key->end()), std::nullopt};
          if (r.value) kr.value = protocol::Bytes(r.value->begin(), r.value->end());
          out.records.push_back(std::move(kr));
        }
      }
      if (next <= offset) break;
      offset = next;
    }
    return out;
  };
}

namespace {

std::function<std::error_code()> sync_log(std::shared_ptr<storage::Log> log) {
  return [log] { return log->sync(); };
}

}  // namespace

awaitable<CoordinatorAppend> append_coordinator_batch(Broker& broker, std::shared_ptr<replication::Partition> part,
                                                      int32_t min_isr, protocol::Bytes batch,
                                                      std::chrono::milliseconds timeout, bool sync) {
  replication::AppendEntry entry;
  entry.partition = part;
  entry.request.origin = replication::AppendOrigin::coordinator;
  entry.request.min_insync_replicas = min_isr;
  entry.request.validate = replication::built_batch(batch);
  co_await broker.replica_manager().append_records(-1, timeout, std::span(&entry, 1));
  if (!entry.result.ok()) {
    RLOG_ERROR("append to %s-%d failed: error code %d", part->topic().c_str(), part->index(),
               protocol::code(entry.result.status.code));
    co_return CoordinatorAppend{entry.result.status.code};
  }
  const CoordinatorAppend appended{protocol::ErrorCode::none, entry.result.base_offset.value()};
  if (!sync || !broker.config().typed().acks_all_fsync) co_return appended;
  std::error_code ec = co_await broker.run_blocking(sync_log(part->log_ptr()));
  if (ec) {
    RLOG_ERROR("fsync of %s failed: %s", part->topic().c_str(), ec.message().c_str());
    co_return CoordinatorAppend{protocol::ErrorCode::kafka_storage_error};
  }
  co_return appended;
}

}  // namespace runnel::broker
