// A client of etcd v3's JSON gateway (grpc-gateway: POST /v3/<service>/<call>
// with the request message as JSON, the response message as JSON; a
// streamed response is newline-delimited JSON objects, each
// {"result": <message>}). HTTP/1.1 over Boost.Beast, one connection per
// call. Every call is bounded by the timeout; a connection that fails or
// times out, or an endpoint answering UNAVAILABLE, moves the call to the
// next endpoint, and the client keeps using the one that answered.
//
// etcd 3.4 (Debian's etcd-server) serves the gateway at /v3/ (and /v3beta/).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "storage/errors.h"

namespace runnel::cluster::etcd {

template <typename T>
using Result = storage::Result<T>;

struct Endpoint {
  std::string host;
  std::string port;
};

// "http://127.0.0.1:2379,http://10.0.0.2:2379" (etcdctl's --endpoints);
// an error for anything else than http://host:port entries.
Result<std::vector<Endpoint>> parse_endpoints(const std::string& list);

// Lets the owner of a stream end it from the event loop.
class StreamControl {
 public:
  void stop();
  bool stopped() const { return stopped_; }

 private:
  friend class Client;
  bool stopped_ = false;
  std::function<void()> close_;
};

class Client {
 public:
  Client(boost::asio::any_io_executor ex, std::vector<Endpoint> endpoints, std::chrono::milliseconds timeout);

  // One unary call: `path` as "/v3/kv/range". The response message, or
  // ClusterErrc: lease_not_found, compacted, unavailable (no endpoint
  // answered), bad_response (any other error etcd reported).
  boost::asio::awaitable<Result<boost::json::object>> call(std::string path, boost::json::object request);

  // A streamed call: `on_message` gets each message's "result" until it
  // returns false, the stream ends or fails, or `control` stops it.
  // Connecting fails over as call() does; once streaming, a failure ends
  // the call (the caller resumes where it was, e.g. a watch from its
  // next revision). Reads after the first message are not timed when
  // `untimed_after_first` (a watch is quiet for as long as nothing changes).
  boost::asio::awaitable<std::error_code> stream(std::string path, boost::json::object request,
                                                 std::function<bool(const boost::json::object&)> on_message,
                                                 std::shared_ptr<StreamControl> control, bool untimed_after_first);

  const std::vector<Endpoint>& endpoints() const { return endpoints_; }
  // The endpoint calls go to first (the last one that answered).
  size_t current() const { return current_; }

 private:
  boost::asio::any_io_executor ex_;
  std::vector<Endpoint> endpoints_;
  std::chrono::milliseconds timeout_;
  size_t current_ = 0;
};

// etcd's int64 fields, which proto3 JSON writes as strings; 0 when absent.
int64_t int_field(const boost::json::object& o, const char* name);

}  // namespace runnel::cluster::etcd
