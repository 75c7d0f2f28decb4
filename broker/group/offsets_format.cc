#include "broker/group/offsets_format.h"

#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"

namespace runnel::broker::group {

namespace {

using protocol::Reader;
using protocol::Writer;

void put_string(Writer& w, const std::string& s) {
  w.i16(static_cast<int16_t>(s.size()));
  w.raw(s.data(), s.size());
}
void put_nullable(Writer& w, const std::optional<std::string>& s) {
  if (!s) w.i16(-1);
  else put_string(w, *s);
}
void put_bytes(Writer& w, const Bytes& b) {
  w.i32(static_cast<int32_t>(b.size()));
  w.raw(b.data(), b.size());
}

// Every length is checked against the bytes remaining (length_i16/i32 fail
// the reader on a negative length other than -1 or one past the end), so a
// malformed record fails its decode instead of reading out of bounds.
std::optional<std::string> get_nullable(Reader& r) {
  int64_t len = r.length_i16();
  if (len < 0) return std::nullopt;
  return r.str(len);
}
std::string get_string(Reader& r) {
  int64_t len = r.length_i16();
  if (len < 0) {
    r.fail("null string");
    return {};
  }
  return r.str(len);
}
Bytes get_bytes(Reader& r) {
  int64_t len = r.length_i32();
  if (len < 0) return {};
  return r.bytes(len);
}

}  // namespace

Bytes encode_key(const OffsetCommitKey& k) {
  Bytes out;
  Writer w(out);
  w.i16(1);
  put_string(w, k.group);
  put_string(w, k.topic);
  w.i32(k.partition);
  return out;
}

Bytes encode_key(const GroupMetadataKey& k) {
  Bytes out;
  Writer w(out);
  w.i16(2);
  put_string(w, k.group);
  return out;
}

Bytes encode_value(const OffsetCommitValue& v) {
  Bytes out;
  Writer w(out);
  if (v.expire_timestamp) {
    w.i16(1);
    w.i64(v.offset);
    put_string(w, v.metadata);
    w.i64(v.commit_timestamp);
    w.i64(*v.expire_timestamp);
  } else {
    w.i16(3);
    w.i64(v.offset);
    w.i32(v.leader_epoch);
    put_string(w, v.metadata);
    w.i64(v.commit_timestamp);
  }
  return out;
}

Bytes encode_value(const GroupMetadataValue& v) {
  Bytes out;
  Writer w(out);
  w.i16(3);
  put_string(w, v.protocol_type);
  w.i32(v.generation);
  put_nullable(w, v.protocol);
  put_nullable(w, v.leader);
  w.i64(v.current_state_timestamp);
  w.i32(static_cast<int32_t>(v.members.size()));
  for (const auto& m : v.members) {
    put_string(w, m.member_id);
    put_nullable(w, m.group_instance_id);
    put_string(w, m.client_id);
    put_string(w, m.client_host);
    w.i32(m.rebalance_timeout);
    w.i32(m.session_timeout);
    put_bytes(w, m.subscription);
    put_bytes(w, m.assignment);
  }
  return out;
}

OffsetsKey decode_key(ByteView bytes) {
  Reader r(bytes);
  int16_t version = r.i16();
  if (!r.ok()) return {};
  if (version == 0 || version == 1) {
    OffsetCommitKey k;
    k.group = get_string(r);
    k.topic = get_string(r);
    k.partition = r.i32();
    if (r.ok()) return k;
  } else if (version == 2) {
    GroupMetadataKey k;
    k.group = get_string(r);
    if (r.ok()) return k;
  }
  return {};
}

std::optional<OffsetCommitValue> decode_offset_value(ByteView bytes) {
  Reader r(bytes);
  int16_t version = r.i16();
  if (version < 0 || version > 3) return std::nullopt;
  OffsetCommitValue v;
  v.offset = r.i64();
  if (version >= 3) v.leader_epoch = r.i32();
  v.metadata = get_string(r);
  v.commit_timestamp = r.i64();
  if (version == 1) v.expire_timestamp = r.i64();
  if (!r.ok()) return std::nullopt;
  return v;
}

std::optional<GroupMetadataValue> decode_group_value(ByteView bytes) {
  Reader r(bytes);
  int16_t version = r.i16();
  if (version < 0 || version > 3) return std::nullopt;
  GroupMetadataValue v;
  v.protocol_type = get_string(r);
  v.generation = r.i32();
  v.protocol = get_nullable(r);
  v.leader = get_nullable(r);
  if (version >= 2) v.current_state_timestamp = r.i64();
  int32_t count = r.i32();
  for (int32_t i = 0; r.ok() && i < count; ++i) {
    GroupMemberRecord m;
    m.member_id = get_string(r);
    if (version >= 3) m.group_instance_id = get_nullable(r);
    m.client_id = get_string(r);
    m.client_host = get_string(r);
    m.rebalance_timeout = version >= 1 ? r.i32() : 0;
    m.session_timeout = r.i32();
    if (version == 0) m.rebalance_timeout = m.session_timeout;
    m.subscription = get_bytes(r);
    m.assignment = get_bytes(r);
    v.members.push_back(std::move(m));
  }
  if (!r.ok()) return std::nullopt;
  return v;
}

int32_t java_string_hash(const std::string& s) {
  // Decode UTF-8 to code points, hash their UTF-16 code units as Java does.
  uint32_t h = 0;
  auto unit = [&h](uint32_t u) { h = 31 * h + u; };
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp = c;
    size_t n = 1;
    if (c >= 0xF0) n = 4, cp = c & 0x07;
    else if (c >= 0xE0) n = 3, cp = c & 0x0F;
    else if (c >= 0xC0) n = 2, cp = c & 0x1F;
    if (i + n > s.size()) n = 1, cp = c;
    for (size_t j = 1; j < n; ++j) cp = (cp << 6) | (static_cast<unsigned char>(s[i + j]) & 0x3F);
    i += n;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      unit(0xD800 + (cp >> 10));
      unit(0xDC00 + (cp & 0x3FF));
    } else {
      unit(cp);
    }
  }
  return static_cast<int32_t>(h);
}

int32_t offsets_partition_for(const std::string& group_id, int32_t partitions) {
  int32_t h = java_string_hash(group_id);
  // Kafka's Utils.abs: Integer.MIN_VALUE maps to 0, not to itself.
  int32_t a = h == INT32_MIN ? 0 : (h < 0 ? -h : h);
  return a % partitions;
}

}  // namespace runnel::broker::group
