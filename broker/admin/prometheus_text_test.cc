#include "broker/admin/prometheus_text.h"

#include <array>
#include <limits>

#include <catch2/catch.hpp>

namespace runnel::broker::admin {
namespace {

TEST_CASE("label values escape backslash, double quote and newline, nothing else", "[admin]") {
  CHECK(escape_label_value("orders") == "orders");
  CHECK(escape_label_value("a\\b") == "a\\\\b");
  CHECK(escape_label_value("say \"hi\"") == "say \\\"hi\\\"");
  CHECK(escape_label_value("two\nlines") == "two\\nlines");
  CHECK(escape_label_value("tab\tand 'quote'") == "tab\tand 'quote'");
  CHECK(escape_label_value("") == "");
}

TEST_CASE("help text escapes backslash and newline but not double quote", "[admin]") {
  CHECK(escape_help("a \"b\"\\c\nd") == "a \"b\"\\\\c\\nd");
}

TEST_CASE("a family is its HELP and TYPE lines, then one line per sample", "[admin]") {
  PrometheusText out;
  out.family("kafka_server_brokertopicmetrics_messagesin_total", "counter", "Records in");
  out.sample("kafka_server_brokertopicmetrics_messagesin_total", {}, uint64_t{7});
  out.sample("kafka_server_brokertopicmetrics_messagesin_total", {{"topic", "a\"b"}}, uint64_t{3});
  out.family("kafka_log_log_logstartoffset", "gauge", "Start");
  out.sample("kafka_log_log_logstartoffset", {{"topic", "t\\x\n"}, {"partition", "0"}}, int64_t{-1});
  CHECK(out.text() ==
        "# HELP kafka_server_brokertopicmetrics_messagesin_total Records in\n"
        "# TYPE kafka_server_brokertopicmetrics_messagesin_total counter\n"
        "kafka_server_brokertopicmetrics_messagesin_total 7\n"
        "kafka_server_brokertopicmetrics_messagesin_total{topic=\"a\\\"b\"} 3\n"
        "# HELP kafka_log_log_logstartoffset Start\n"
        "# TYPE kafka_log_log_logstartoffset gauge\n"
        "kafka_log_log_logstartoffset{topic=\"t\\\\x\\n\",partition=\"0\"} -1\n");
}

TEST_CASE("counter values keep every digit of a 64-bit count", "[admin]") {
  PrometheusText out;
  out.sample("x_total", {}, uint64_t{18446744073709551615u});
  CHECK(out.take() == "x_total 18446744073709551615\n");
}

TEST_CASE("a histogram is cumulative buckets with le last, then its sum and count", "[admin]") {
  static constexpr std::array<double, 2> bounds{0.5, 10};
  Histogram h;
  h.observe(0.25, bounds);
  h.observe(3, bounds);
  h.observe(3, bounds);
  h.observe(99, bounds);
  PrometheusText out;
  out.histogram("t_ms", {{"request", "Produce"}}, h, bounds);
  CHECK(out.take() ==
        "t_ms_bucket{request=\"Produce\",le=\"0.5\"} 1\n"
        "t_ms_bucket{request=\"Produce\",le=\"10\"} 3\n"
        "t_ms_bucket{request=\"Produce\",le=\"+Inf\"} 4\n"
        "t_ms_sum{request=\"Produce\"} 105.25\n"
        "t_ms_count{request=\"Produce\"} 4\n");
}

TEST_CASE("doubles are written in their shortest exact form", "[admin]") {
  CHECK(format_double(1) == "1");
  CHECK(format_double(0.5) == "0.5");
  CHECK(format_double(0.1) == "0.1");
  CHECK(format_double(20001.8) == "20001.8");
  CHECK(format_double(1e-7) == "1e-07");
  CHECK(format_double(std::numeric_limits<double>::infinity()) == "+Inf");
}

}  // namespace
}  // namespace runnel::broker::admin
