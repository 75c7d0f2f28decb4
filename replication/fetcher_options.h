// The replica fetcher's settings from the broker's configuration: Kafka's
// num.replica.fetchers and replica.fetch.* / replica.socket.timeout.ms, and
// Runnel's runnel.acks.all.fsync (a follower fsyncs before it reports).
#pragma once

#include "base/ids.h"
#include "broker/config.h"
#include "replication/replica_fetcher.h"

namespace runnel::replication {

FetcherOptions fetcher_options(const broker::BrokerConfig& config, NodeId self);

}  // namespace runnel::replication
