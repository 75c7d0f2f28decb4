#include "replication/fetcher_options.h"

namespace runnel::replication {

FetcherOptions fetcher_options(const broker::BrokerConfig& config, NodeId self) {
  using std::chrono::milliseconds;
  FetcherOptions o;
  o.self = self;
  o.max_bytes = config.get_int("replica.fetch.max.bytes");
  o.min_bytes = config.get_int("replica.fetch.min.bytes");
  o.response_max_bytes = config.get_int("replica.fetch.response.max.bytes");
  o.max_wait = milliseconds(config.get_int("replica.fetch.wait.max.ms"));
  o.backoff = milliseconds(config.get_int("replica.fetch.backoff.ms"));
  o.socket_timeout = milliseconds(config.get_int("replica.socket.timeout.ms"));
  o.num_fetchers = config.get_int("num.replica.fetchers");
  o.fsync_before_ack = config.typed().acks_all_fsync;
  return o;
}

}  // namespace runnel::replication
