// One partition's state changed by a request from any broker (ElectLeaders,
// AlterPartitionReassignments): the change is decided over the image as it
// stands, written by compare-and-swap (cluster/topic_writes.h), and
// answered once this broker's image has it. A lost compare-and-swap means
// the partition changed meanwhile (an ISR write, an election): the change
// is decided again over the image that brought that, a bounded number of
// times.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "broker/asio.h"
#include "cluster/metadata_image.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

class Broker;

// A request's answer for one partition.
struct PartitionChangeOutcome {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::optional<std::string> message;
};

// The partition's next state over `image`, or the answer without a write.
using DecidePartitionChange =
    std::function<std::variant<cluster::PartitionRegistration, PartitionChangeOutcome>(const cluster::MetadataImage&)>;

// Writes what `decide` says for `topic`-`partition` (no write when the next
// state equals the current one); REQUEST_TIMED_OUT when the store cannot be
// written, the image does not show the write within `limit`, or the
// partition kept changing.
awaitable<PartitionChangeOutcome> write_partition_change(Broker& b, const std::string& topic, int32_t partition,
                                                         DecidePartitionChange decide, std::chrono::milliseconds limit);

}  // namespace runnel::broker
