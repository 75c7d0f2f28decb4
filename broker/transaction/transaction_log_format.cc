#include "broker/transaction/transaction_log_format.h"

#include "broker/group/offsets_format.h"
#include "protocol/codec/fields.h"
#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"

namespace runnel::broker::transaction {

namespace {

using protocol::get_count;
using protocol::Reader;
using protocol::Writer;

constexpr uint32_t kTagPreviousProducerId = 0;
constexpr uint32_t kTagNextProducerId = 1;
constexpr uint32_t kTagClientTransactionVersion = 2;

void put_string(Writer& w, const std::string& s, bool flexible) {
  if (flexible) w.uvarint(static_cast<uint32_t>(s.size() + 1));
  else w.i16(static_cast<int16_t>(s.size()));
  w.raw(s.data(), s.size());
}

// An array length; -1 is null.
void put_count(Writer& w, int64_t count, bool flexible) {
  if (flexible) w.uvarint(static_cast<uint32_t>(count + 1));
  else w.i32(static_cast<int32_t>(count));
}

void put_tagged_int(Writer& w, uint32_t tag, int64_t v, int width) {
  w.uvarint(tag);
  w.uvarint(static_cast<uint32_t>(width));
  if (width == 8) w.i64(v);
  else w.i16(static_cast<int16_t>(v));
}

std::string get_string(Reader& r, bool flexible, const char* null_error) {
  int64_t len = flexible ? r.length_compact() : r.length_i16();
  if (r.ok() && len < 0) r.fail(null_error);
  if (r.ok() && len > static_cast<int64_t>(kMaxStringBytes)) r.fail("string longer than 32767 bytes");
  // Reader::str trusts its length, which is checked only while the reader is ok.
  if (!r.ok()) return {};
  return r.str(len);
}

// Reads a tagged-field section: `known(tag, field)` reads the fields it knows
// and returns false for the others, which are skipped as Kafka keeps them
// unread in unknownTaggedFields.
template <typename Known>
void get_tagged_fields(Reader& r, Known&& known) {
  uint32_t count = r.uvarint();
  for (uint32_t i = 0; r.ok() && i < count; ++i) {
    uint32_t tag = r.uvarint();
    int64_t size = static_cast<int64_t>(r.uvarint());
    if (!r.ok()) return;
    if (size > static_cast<int64_t>(r.remaining())) {
      r.fail("tagged field past end of input");
      return;
    }
    Reader field(r.position(), static_cast<size_t>(size));
    r.skip(static_cast<size_t>(size));
    if (known(tag, field) && (!field.ok() || field.remaining() != 0)) r.fail("tagged field of the wrong size");
  }
}

}  // namespace

std::optional<Bytes> encode_key(const TransactionLogKey& key) {
  if (key.transactional_id.size() > kMaxStringBytes) return std::nullopt;
  Bytes out;
  Writer w(out);
  w.i16(kTransactionLogKeyVersion);
  put_string(w, key.transactional_id, false);
  return out;
}

std::optional<Bytes> encode_value(const TransactionLogValue& v, int16_t version) {
  const bool prev = v.previous_producer_id != -1;
  const bool next = v.next_producer_id != -1;
  const bool tv = v.client_transaction_version != 0;
  if (version < 0 || version > 1 || (version == 0 && (prev || next || tv))) return std::nullopt;
  if (v.transaction_partitions)
    for (const auto& p : *v.transaction_partitions)
      if (p.topic.size() > kMaxStringBytes) return std::nullopt;
  const bool flexible = version >= 1;
  Bytes out;
  Writer w(out);
  w.i16(version);
  w.i64(v.producer_id);
  w.i16(v.producer_epoch);
  w.i32(v.transaction_timeout_ms);
  w.i8(v.transaction_status);
  if (!v.transaction_partitions) {
    put_count(w, -1, flexible);
  } else {
    put_count(w, static_cast<int64_t>(v.transaction_partitions->size()), flexible);
    for (const auto& p : *v.transaction_partitions) {
      put_string(w, p.topic, flexible);
      put_count(w, static_cast<int64_t>(p.partition_ids.size()), flexible);
      for (int32_t id : p.partition_ids) w.i32(id);
      if (flexible) w.uvarint(0);  // the entry's tagged fields: none
    }
  }
  w.i64(v.transaction_last_update_timestamp_ms);
  w.i64(v.transaction_start_timestamp_ms);
  if (flexible) {
    w.uvarint(static_cast<uint32_t>(prev + next + tv));
    if (prev) put_tagged_int(w, kTagPreviousProducerId, v.previous_producer_id, 8);
    if (next) put_tagged_int(w, kTagNextProducerId, v.next_producer_id, 8);
    if (tv) put_tagged_int(w, kTagClientTransactionVersion, v.client_transaction_version, 2);
  }
  return out;
}

Decoded<TransactionLogKey> decode_key(ByteView bytes) {
  Reader r(bytes);
  int16_t version = r.i16();
  if (r.ok() && version != kTransactionLogKeyVersion) return {std::nullopt, "unknown key version " + std::to_string(version)};
  TransactionLogKey key;
  key.transactional_id = get_string(r, false, "null transactional id");
  if (!r.ok()) return {std::nullopt, r.error()};
  return {std::move(key), {}};
}

Decoded<TransactionLogValue> decode_value(ByteView bytes) {
  Reader r(bytes);
  int16_t version = r.i16();
  if (r.ok() && (version < 0 || version > 1)) return {std::nullopt, "unknown value version " + std::to_string(version)};
  const bool flexible = version >= 1;
  TransactionLogValue v;
  v.producer_id = r.i64();
  v.producer_epoch = r.i16();
  v.transaction_timeout_ms = r.i32();
  v.transaction_status = r.i8();
  int64_t topics = get_count(r, flexible);
  if (r.ok() && topics >= 0) {
    v.transaction_partitions.emplace();
    for (int64_t i = 0; r.ok() && i < topics; ++i) {
      TransactionLogPartitions p;
      p.topic = get_string(r, flexible, "null topic");
      int64_t ids = get_count(r, flexible);
      if (r.ok() && ids < 0) r.fail("null partition ids");
      for (int64_t j = 0; r.ok() && j < ids; ++j) p.partition_ids.push_back(r.i32());
      if (flexible) get_tagged_fields(r, [](uint32_t, Reader&) { return false; });
      v.transaction_partitions->push_back(std::move(p));
    }
  }
  v.transaction_last_update_timestamp_ms = r.i64();
  v.transaction_start_timestamp_ms = r.i64();
  if (flexible) {
    get_tagged_fields(r, [&v](uint32_t tag, Reader& field) {
      switch (tag) {
        case kTagPreviousProducerId: v.previous_producer_id = field.i64(); return true;
        case kTagNextProducerId: v.next_producer_id = field.i64(); return true;
        case kTagClientTransactionVersion: v.client_transaction_version = field.i16(); return true;
        default: return false;
      }
    });
  }
  if (!r.ok()) return {std::nullopt, r.error()};
  return {std::move(v), {}};
}

int32_t transaction_partition_for(const std::string& transactional_id, int32_t partitions) {
  // The same formula as the group coordinator's partitionFor, so one function.
  return group::offsets_partition_for(transactional_id, partitions);
}

}  // namespace runnel::broker::transaction
