#include "protocol/consumer_protocol.h"

#include <algorithm>

#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"

namespace runnel::protocol {


namespace {

void put_string(Writer& w, const std::string& s) {
  w.i16(static_cast<int16_t>(s.size()));
  w.raw(s.data(), s.size());
}

std::string get_string(Reader& r) {
  int64_t n = r.length_i16();
  return n < 0 ? std::string() : r.str(n);
}

}  // namespace

Bytes encode_subscription(const Subscription& s) {
  Bytes out;
  Writer w(out);
  w.i16(0);
  w.i32(static_cast<int32_t>(s.topics.size()));
  for (const auto& t : s.topics) put_string(w, t);
  w.i32(-1);  // user data: null
  return out;
}

std::optional<Subscription> decode_subscription(ByteView bytes) {
  Reader r(bytes);
  Subscription s;
  r.i16();  // version: later versions only append fields
  int64_t n = r.count_i32();
  for (int64_t i = 0; i < n && r.ok(); ++i) s.topics.push_back(get_string(r));
  if (!r.ok()) return std::nullopt;
  return s;
}

Bytes encode_assignment(const Assignment& a) {
  Bytes out;
  Writer w(out);
  w.i16(0);
  w.i32(static_cast<int32_t>(a.size()));
  for (const auto& [topic, parts] : a) {
    put_string(w, topic);
    w.i32(static_cast<int32_t>(parts.size()));
    for (int32_t p : parts) w.i32(p);
  }
  w.i32(-1);  // user data: null
  return out;
}

std::optional<Assignment> decode_assignment(ByteView bytes) {
  Assignment a;
  if (bytes.empty()) return a;  // a member with nothing assigned
  Reader r(bytes);
  r.i16();
  int64_t n = r.count_i32();
  for (int64_t i = 0; i < n && r.ok(); ++i) {
    std::string topic = get_string(r);
    int64_t k = r.count_i32();
    auto& parts = a[topic];
    for (int64_t j = 0; j < k && r.ok(); ++j) parts.push_back(r.i32());
  }
  if (!r.ok()) return std::nullopt;
  return a;
}

std::map<std::string, Assignment> range_assign(const std::map<std::string, Subscription>& members,
                                               const std::map<std::string, int32_t>& partition_counts) {
  std::map<std::string, Assignment> out;
  for (const auto& [id, sub] : members) out[id];
  for (const auto& [topic, count] : partition_counts) {
    std::vector<std::string> subscribed;  // std::map keeps them sorted
    for (const auto& [id, sub] : members)
      if (std::find(sub.topics.begin(), sub.topics.end(), topic) != sub.topics.end()) subscribed.push_back(id);
    if (subscribed.empty()) continue;
    int32_t n = static_cast<int32_t>(subscribed.size());
    int32_t per = count / n, extra = count % n;
    for (int32_t i = 0; i < n; ++i) {
      int32_t start = per * i + std::min(i, extra);
      int32_t len = per + (i < extra ? 1 : 0);
      if (len == 0) continue;
      auto& parts = out[subscribed[i]][topic];
      for (int32_t p = start; p < start + len; ++p) parts.push_back(p);
    }
  }
  return out;
}

}  // namespace runnel::protocol
