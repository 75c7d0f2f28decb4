#include "broker/admin/admin_server.h"

#include <catch2/catch.hpp>

#include "broker/admin/prometheus_text.h"

namespace runnel::broker::admin {
namespace {

http::request<http::string_body> request(http::verb method, const char* target) {
  return http::request<http::string_body>{method, target, 11};
}

TEST_CASE("liveness answers 200 whatever readiness says", "[admin]") {
  AdminState state{[] { return false; }, [] { return std::string(); }, {}};
  auto res = respond(request(http::verb::get, "/v1/status/live"), state);
  CHECK(res.result() == http::status::ok);
}

TEST_CASE("readiness is 200 with ready true only while the broker is ready, else 503", "[admin]") {
  bool ready = false;
  AdminState state{[&] { return ready; }, [] { return std::string(); }, {}};
  auto before = respond(request(http::verb::get, "/v1/status/ready"), state);
  CHECK(before.result() == http::status::service_unavailable);
  CHECK(before.body() == "{\"ready\":false}");
  ready = true;
  auto after = respond(request(http::verb::get, "/v1/status/ready"), state);
  CHECK(after.result() == http::status::ok);
  CHECK(after.body() == "{\"ready\":true}");
  CHECK(after[http::field::content_type] == "application/json");
}

TEST_CASE("metrics answer the rendered text as Prometheus's text format", "[admin]") {
  int scrapes = 0;
  AdminState state{[] { return true; }, [&] { return "x_total " + std::to_string(++scrapes) + "\n"; }, {}};
  auto res = respond(request(http::verb::get, "/metrics?name=x"), state);
  CHECK(res.result() == http::status::ok);
  CHECK(res[http::field::content_type] == kTextContentType);
  CHECK(res.body() == "x_total 1\n");
  CHECK(respond(request(http::verb::get, "/metrics"), state).body() == "x_total 2\n");
}

TEST_CASE("an unknown path is 404 and another method than GET 405", "[admin]") {
  AdminState state{[] { return true; }, [] { return std::string("m 1\n"); }, {}};
  CHECK(respond(request(http::verb::get, "/v1/nope"), state).result() == http::status::not_found);
  CHECK(respond(request(http::verb::get, "/metricsx"), state).result() == http::status::not_found);
  auto post = respond(request(http::verb::post, "/metrics"), state);
  CHECK(post.result() == http::status::method_not_allowed);
  CHECK(post[http::field::allow] == "GET");
  CHECK(respond(request(http::verb::delete_, "/v1/status/ready"), state).result() == http::status::method_not_allowed);
}

TEST_CASE("the JSON documents answer with their own status, other /v1 paths stay 404", "[admin]") {
  AdminState state{[] { return true; }, [] { return std::string(); }, [](std::string_view path) {
                     std::optional<JsonAnswer> a;
                     if (path == "/v1/topics") a = JsonAnswer{200, "[]"};
                     if (path == "/v1/partitions/gone") a = JsonAnswer{404, "{\"error_code\":404}"};
                     return a;
                   }};
  auto topics = respond(request(http::verb::get, "/v1/topics?x=1"), state);
  CHECK(topics.result() == http::status::ok);
  CHECK(topics[http::field::content_type] == "application/json");
  CHECK(topics.body() == "[]");
  CHECK(respond(request(http::verb::get, "/v1/partitions/gone"), state).result() == http::status::not_found);
  CHECK(respond(request(http::verb::get, "/v1/other"), state).result() == http::status::not_found);
  CHECK(respond(request(http::verb::put, "/v1/topics"), state).result() == http::status::method_not_allowed);
}

}  // namespace
}  // namespace runnel::broker::admin
