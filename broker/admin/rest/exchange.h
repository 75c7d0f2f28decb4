// One REST request and its connection, and the answers every endpoint
// gives the same way: JSON bodies, REST Proxy's error bodies, whole bodies
// read up to a bound, and a chunked answer written piece by piece.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/serializer.hpp>

#include "broker/admin/rest/rest_error.h"
#include "broker/admin/rest/rest_server.h"

namespace runnel::broker::admin::rest {

struct Exchange {
  HttpStream& stream;
  beast::flat_buffer& buffer;
  http::request_parser<http::string_body>& parser;
  RestService& service;
  std::vector<std::string> path;  // the target's segments, percent-decoded, no query
  std::string query;
  RestClient client;

  const http::request<http::string_body>& request() const { return parser.get(); }
  // The media type of a header (Content-Type, ...) without parameters, lowercased.
  std::string media_type(http::field field) const;
  // A query parameter's value, if given.
  std::optional<std::string> query_param(std::string_view name) const;
};

// Writes a whole answer; says whether the connection stays open (not when
// the client asked to close, nor while its request body is unread).
awaitable<bool> send(Exchange& ex, http::status status, std::string_view content_type, std::string body);
awaitable<bool> send_error(Exchange& ex, const RestError& error, std::string_view content_type = "application/json");

// Reads the rest of the body, at most `limit` bytes: nullopt when read,
// else the error to answer (413, or 400 for a malformed body).
awaitable<std::optional<RestError>> read_body(Exchange& ex, size_t limit);

// A chunked 200 answer: the header goes out with the first piece.
class ChunkedAnswer {
 public:
  ChunkedAnswer(Exchange& ex, std::string_view content_type);
  awaitable<bool> write(std::string_view piece);  // false: the connection failed
  awaitable<bool> finish();
  bool started() const { return started_; }

 private:
  Exchange& ex_;
  http::response<http::empty_body> res_;
  http::response_serializer<http::empty_body> serializer_;
  bool started_ = false;
};

}  // namespace runnel::broker::admin::rest
