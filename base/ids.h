// Strong types for the numbers that cross module lines: an offset, a
// partition index, a broker (node) id and a leader epoch are all plain
// integers on the wire, and mixing them up compiles silently. Each is its
// own type here (Redpanda's model::offset, named_type), explicit to build
// and explicit to unwrap, so a replica manager's or a metadata image's
// signature says what it takes.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>

namespace runnel {

template <typename Rep, typename Tag>
class StrongId {
 public:
  using rep = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value_(v) {}
  constexpr Rep value() const { return value_; }
  constexpr auto operator<=>(const StrongId&) const = default;
  friend std::ostream& operator<<(std::ostream& os, StrongId id) { return os << id.value_; }

 private:
  Rep value_{};
};

struct NodeIdTag {};
struct PartitionIdTag {};
struct LeaderEpochTag {};

// A broker's node.id. -1 is Kafka's "no broker" (no leader).
using NodeId = StrongId<int32_t, NodeIdTag>;
inline constexpr NodeId kNoNode{-1};

// A partition's index within its topic.
using PartitionId = StrongId<int32_t, PartitionIdTag>;

// A partition's leader epoch. -1 is Kafka's "no epoch given"
// (RecordBatch.NO_PARTITION_LEADER_EPOCH) in requests and batches.
using LeaderEpoch = StrongId<int32_t, LeaderEpochTag>;
inline constexpr LeaderEpoch kNoLeaderEpoch{-1};

// A position in a partition's log. Offsets are counted, so unlike the ids
// they take arithmetic with a count of records (and give one back).
class Offset {
 public:
  using rep = int64_t;
  constexpr Offset() = default;
  constexpr explicit Offset(int64_t v) : value_(v) {}
  constexpr int64_t value() const { return value_; }
  constexpr auto operator<=>(const Offset&) const = default;
  constexpr Offset operator+(int64_t n) const { return Offset(value_ + n); }
  constexpr Offset operator-(int64_t n) const { return Offset(value_ - n); }
  constexpr int64_t operator-(Offset o) const { return value_ - o.value_; }
  constexpr Offset& operator+=(int64_t n) {
    value_ += n;
    return *this;
  }
  friend std::ostream& operator<<(std::ostream& os, Offset o) { return os << o.value_; }

 private:
  int64_t value_ = 0;
};

// Kafka's -1 "no offset" (UNKNOWN_OFFSET) in responses.
inline constexpr Offset kUnknownOffset{-1};

}  // namespace runnel

template <typename Rep, typename Tag>
struct std::hash<runnel::StrongId<Rep, Tag>> {
  size_t operator()(runnel::StrongId<Rep, Tag> id) const noexcept { return std::hash<Rep>{}(id.value()); }
};
template <>
struct std::hash<runnel::Offset> {
  size_t operator()(runnel::Offset o) const noexcept { return std::hash<int64_t>{}(o.value()); }
};
