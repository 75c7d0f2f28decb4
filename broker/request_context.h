// What a handler knows about the request it serves, besides the request.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "broker/asio.h"
#include "protocol/header.h"
#include "security/principal.h"

namespace runnel::broker {

class Broker;

struct RequestContext {
  Broker& broker;
  const protocol::RequestHeader& header;
  std::string client_host;    // the peer's address as Kafka writes it (client_address.h): ACL hosts, client.host
  std::string listener_name;  // the listener the request arrived on
  security::KafkaPrincipal principal;  // who sent it: what the authorizer checks
  size_t request_size = 0;             // the frame's bytes after its size prefix (the produce quota's measure)
  // The time the request has held the event loop so far, while a
  // request_percentage quota exists (broker/timed_executor.h); else null.
  const std::chrono::steady_clock::duration* thread_time = nullptr;

  // Handlers set these:
  bool send_response = true;  // false: the client expects no response (Produce acks=0)
  bool close_connection = false;  // Kafka's answer to an acks=0 produce error
  // Set by the connection; a handler calls it once what it must do in
  // order with the connection's later requests is done (a Produce: its
  // appends): the connection goes on to the next request while this
  // handler runs on (connection.h). Empty where there is no connection.
  std::function<void()> release_order{};
  // Client quotas (broker/quota_managers.h): the throttle the response
  // carries and the connection waits out; a handler that measured its own
  // quotas (Produce, Fetch) sets quotas_recorded.
  int32_t throttle_time_ms = 0;
  bool quotas_recorded = false;

  int16_t api_version() const { return header.api_version; }
  std::string client_id() const { return header.client_id.value_or(""); }
};

}  // namespace runnel::broker
