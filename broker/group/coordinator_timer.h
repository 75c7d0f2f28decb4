// The group coordinator's timers (Kafka's CoordinatorTimer): at most one
// pending operation per key, replaced when the key is scheduled again and
// dropped when it is cancelled. The coordinator keys them as Kafka does:
//
//   heartbeat-<group>-<member>   a member's session (or a KIP-394 pending
//                                member's wait for its second JoinGroup)
//   join-<group>                 the rebalance timeout, or the initial delay
//                                of a rebalance that started from Empty
//   sync-<group>                 members that owe a SyncGroup after the join
//
// so each deadline wakes the broker once, when it is due, and a condition
// met early (every member joined, every member synced) cancels its timer.
// Deadlines are on the coordinator's clock, in milliseconds: the broker runs
// them through the purgatory (purgatory_timer.h); the coordinator's unit
// tests keep a virtual clock and advance it by hand.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace runnel::broker::group {

class CoordinatorTimer {
 public:
  virtual ~CoordinatorTimer() = default;
  // Runs `operation` once at `deadline_ms` (at once if that has passed), in
  // place of whatever `key` held.
  virtual void schedule(const std::string& key, int64_t deadline_ms, std::function<void()> operation) = 0;
  // Drops what `key` holds, if anything; it will not run.
  virtual void cancel(const std::string& key) = 0;
};

}  // namespace runnel::broker::group
