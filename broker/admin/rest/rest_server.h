// The REST Proxy compatible endpoints on the admin listener (README.md's
// REST section). admin_server.cc reads a request's header and hands every
// target under /v3/, /topics and /consumers here with the connection; the
// endpoint reads the body itself, so that a v3 produce streams: records
// are produced as they arrive and each one's delivery report is written
// back as soon as it is known.
//
//   GET  /v3/clusters, /v3/clusters/{cluster_id}           v3_clusters.cc
//   POST /v3/clusters/{cluster_id}/topics/{topic}/records  v3_produce.cc
//   POST /topics/{topic}, /topics/{topic}/partitions/{p}   v2_produce.cc
//   /consumers/{group}[/instances/{name}/...]             v2_consumers.cc
//        (v2 consumer instances: create, subscribe, assign, seek, poll, commit)
//   POST /topics/{topic}/raw                               raw_produce.cc
//        (Runnel's own: the body is one record's value, for Flume's HTTP sink)
#pragma once

#include <string_view>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "broker/admin/http_stream.h"
#include "broker/admin/rest/consumer_registry.h"
#include "broker/admin/rest/record_producer.h"
#include "broker/asio.h"

namespace runnel::broker::admin::rest {

namespace beast = boost::beast;
namespace http = beast::http;

// A body REST reads whole (v2, raw) is at most this; a v3 stream is read as
// it comes, one record's JSON at most kMaxRecordJson.
inline constexpr size_t kMaxBody = 64 * 1024 * 1024;
inline constexpr size_t kMaxRecordJson = 16 * 1024 * 1024;

class RestService {
 public:
  explicit RestService(Broker& broker);
  RecordProducer& producer() { return producer_; }
  ConsumerRegistry& consumers() { return consumers_; }
  Broker& broker() { return producer_.broker(); }

 private:
  RecordProducer producer_;
  ConsumerRegistry consumers_;
};

// Whether the path (no query) belongs to the REST endpoints.
bool is_rest_path(std::string_view path);

// Serves one request whose header `parser` has read, from `principal`
// (admin_auth.h); says whether the connection may carry another request.
awaitable<bool> serve(HttpStream& stream, beast::flat_buffer& buffer,
                      http::request_parser<http::string_body>& parser, RestService& service,
                      const security::KafkaPrincipal& principal);

}  // namespace runnel::broker::admin::rest
