// The server-side assignors by the names `group.consumer.assignors` and a
// heartbeat's ServerAssignor use; Kafka matches the name exactly.
#include "broker/group/consumer/partition_assignor.h"

#include "broker/group/consumer/range_assignor.h"
#include "broker/group/consumer/uniform_assignor.h"

namespace runnel::broker::group::consumer {

std::unique_ptr<PartitionAssignor> make_assignor(std::string_view name) {
  if (name == "uniform") return std::make_unique<UniformAssignor>();
  if (name == "range") return std::make_unique<RangeAssignor>();
  return nullptr;
}

}  // namespace runnel::broker::group::consumer
