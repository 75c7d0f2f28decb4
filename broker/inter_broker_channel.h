// Requests a cluster's broker sends another outside replication: the
// transaction coordinator's WriteTxnMarkers to each partition's leader and
// a partition leader's AddPartitionsToTxn verification at a coordinator on
// another broker (the NodeToNodeChannelManager under Kafka's
// TransactionMarkerChannelManager and AddPartitionsToTxnManager). They go
// to the destination's endpoint on the inter-broker listener, with its TLS
// and SASL, as the replica fetchers' do (Broker::start_replication).
//
// A BrokerSender carries one request at a time, so each destination keeps
// the connections that are idle for the next request; a request finding
// none opens one. Requests to one broker so run side by side, as a
// coordinator's markers for many transactions do, without one waiting
// behind a slow one. A connection that failed is dropped, not kept.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "replication/broker_sender.h"

namespace runnel::broker {

class InterBrokerChannel {
 public:
  using Endpoint = std::pair<std::string, uint16_t>;
  // Where a broker is reachable on the inter-broker listener; nullopt when
  // the image has no live registration with it.
  using Resolve = std::function<std::optional<Endpoint>(NodeId)>;

  struct Options {
    std::string client_id;
    // Bounds every connect, write and read (BrokerSender).
    std::chrono::milliseconds timeout{30000};
    std::shared_ptr<boost::asio::ssl::context> tls;
    bool verify_host = false;
    std::optional<security::sasl::SaslCredentials> sasl;
  };

  InterBrokerChannel(asio::any_io_executor ex, Options options, Resolve resolve);

  // `request` to `node` at `version`; the connection's error (host
  // unreachable for a node without an endpoint) or the response.
  template <typename Api>
  awaitable<replication::Result<typename Api::Response>> send(NodeId node, const typename Api::Request& request,
                                                               int16_t version);

 private:
  // Idle connections kept per destination beyond those in use.
  static constexpr size_t kMaxIdle = 4;

  std::unique_ptr<replication::BrokerSender> take(NodeId node, const Endpoint& at);
  void give_back(NodeId node, std::unique_ptr<replication::BrokerSender> sender);

  asio::any_io_executor ex_;
  Options options_;
  Resolve resolve_;
  std::map<NodeId, std::vector<std::unique_ptr<replication::BrokerSender>>> idle_;
};

template <typename Api>
awaitable<replication::Result<typename Api::Response>> InterBrokerChannel::send(NodeId node,
                                                                                const typename Api::Request& request,
                                                                                int16_t version) {
  const std::optional<Endpoint> at = resolve_(node);
  if (!at) co_return std::make_error_code(std::errc::host_unreachable);
  std::unique_ptr<replication::BrokerSender> sender = take(node, *at);
  auto response = co_await sender->send<Api>(request, version);
  if (response) give_back(node, std::move(sender));
  co_return response;
}

}  // namespace runnel::broker
