#include "broker/partition_change_writer.h"

#include "broker/broker.h"
#include "cluster/topic_writes.h"

namespace runnel::broker {

awaitable<PartitionChangeOutcome> write_partition_change(Broker& b, const std::string& topic, int32_t partition,
                                                         DecidePartitionChange decide, std::chrono::milliseconds limit) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const cluster::ImagePtr image = b.metadata_cache().image();
    auto decided = decide(*image);
    if (auto* o = std::get_if<PartitionChangeOutcome>(&decided)) co_return *o;
    const auto& next = std::get<cluster::PartitionRegistration>(decided);
    // Nothing to write (so always on a single node, whose partitions have no key).
    if (next == *image->partition(topic, PartitionId(partition))) co_return PartitionChangeOutcome{};
    auto written =
        co_await b.metadata().commit(cluster::partition_change_txn(*image->topic(topic), PartitionId(partition), next));
    if (!written) co_return PartitionChangeOutcome{protocol::ErrorCode::request_timed_out, written.error().message()};
    const bool seen = co_await b.wait_for_image(written->revision, limit);
    if (written->succeeded)
      co_return seen ? PartitionChangeOutcome{} : PartitionChangeOutcome{protocol::ErrorCode::request_timed_out, std::nullopt};
  }
  co_return PartitionChangeOutcome{protocol::ErrorCode::request_timed_out, "The partition kept changing"};
}

}  // namespace runnel::broker
