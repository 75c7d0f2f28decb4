// `runnel produce TOPIC`: one record per input line (or per JSON object
// with --format json), through the batching idempotent Producer.
#include <fcntl.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>

#include "cli/command.h"
#include "cli/kafka_errors.h"
#include "cli/line_reader.h"
#include "cli/producer.h"
#include "cli/progress.h"

namespace runnel::cli {

namespace json = boost::json;

namespace {

constexpr const char* kUsage = "runnel produce TOPIC [-i FILE] [-K SEP] [-H k=v ...] [-p N] [-z CODEC] [--acks 0|1|all]";
constexpr const char* kAbout =
    "Produces one record per line of stdin (or FILE). With -K the line is split at the first SEP into key and "
    "value. --format json reads one object per line: {\"key\": ..., \"value\": ..., \"headers\": {\"k\": \"v\"}, "
    "\"partition\": N, \"timestamp\": MS} (a value that is not a string is written as its JSON text). Keyed records "
    "go where Kafka's default partitioner puts them (murmur2). Idempotent unless --no-idempotence or acks is not "
    "all. Batching: -X linger.ms (default 5), -X batch.size (default 1000000).";

std::optional<std::string> json_text(const json::value& v, const char* what) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return std::string(v.as_string());
  if (std::string(what) == "header value") throw UsageError("a header value must be a string or null");
  return json::serialize(v);
}

// One --format json line into `r` (topic and -p/-H defaults already set).
void parse_json_record(const std::string& line, uint64_t line_no, ProducerRecord& r) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  std::string where = "input line " + std::to_string(line_no);
  if (ec || !v.is_object()) throw UsageError(where + ": not a JSON object");
  const auto& o = v.as_object();
  for (const auto& [k, val] : o) {
    if (k == "key") {
      r.key = json_text(val, "key");
    } else if (k == "value") {
      r.value = json_text(val, "value");
    } else if (k == "partition") {
      if (!val.is_int64()) throw UsageError(where + ": partition must be an integer");
      r.partition = static_cast<int32_t>(val.as_int64());
    } else if (k == "timestamp") {
      if (!val.is_int64()) throw UsageError(where + ": timestamp must be an integer (ms)");
      r.timestamp_ms = val.as_int64();
    } else if (k == "headers") {
      if (val.is_object()) {
        for (const auto& [hk, hv] : val.as_object()) r.headers.emplace_back(std::string(hk), json_text(hv, "header value"));
      } else if (val.is_array()) {
        // [{"key": k, "value": v}, ...] keeps order and allows repeats.
        for (const auto& h : val.as_array()) {
          if (!h.is_object() || !h.as_object().contains("key") || !h.as_object().at("key").is_string())
            throw UsageError(where + ": headers array entries are {\"key\": ..., \"value\": ...}");
          const auto& ho = h.as_object();
          r.headers.emplace_back(std::string(ho.at("key").as_string()),
                                 ho.contains("value") ? json_text(ho.at("value"), "header value") : std::nullopt);
        }
      } else {
        throw UsageError(where + ": headers must be an object or an array");
      }
    } else {
      throw UsageError(where + ": unknown field '" + std::string(k) + "'");
    }
  }
}

int16_t parse_acks(const std::string& s) {
  if (s == "all" || s == "-1") return -1;
  if (s == "0") return 0;
  if (s == "1") return 1;
  throw UsageError("--acks is 0, 1 or all, got '" + s + "'");
}

}  // namespace

int produce_command(const std::vector<std::string>& argv) {
  auto args = parse_command({{'i', "input", "FILE", "read FILE instead of stdin"},
                             {'K', "key-delimiter", "SEP", "split each line at the first SEP into key and value"},
                             {'H', "header", "KEY=VALUE", "add this header to every record, repeatable"},
                             {'p', "partition", "N", "produce to partition N (default: the partitioner)"},
                             {'z', "compression", "CODEC", "none|gzip|snappy|lz4|zstd (default none)"},
                             {0, "acks", "0|1|all", "acknowledgement the leader waits for (default all)"},
                             {0, "no-idempotence", nullptr, "no producer id and sequence numbers"},
                             {0, "format", "text|json", "input format (default text: one line per record)"}},
                            argv, kUsage, kAbout);
  std::string topic = one_positional(args, "topic", kUsage);
  std::string format = args.get("format", "text");
  if (format != "text" && format != "json") throw UsageError("--format is text or json, got '" + format + "'");
  ClientConfig config = ClientConfig::from(args);
  ProducerOptions opts;
  opts.acks = parse_acks(args.get("acks", config.get("acks", "all")));
  opts.compression = parse_compression(args.get("compression", config.get("compression.type", "none")));
  bool idempotence_asked = config.get("enable.idempotence", "") == "true";
  opts.idempotent = !args.has("no-idempotence") && config.get("enable.idempotence", "true") == "true";
  if (opts.acks != -1 && opts.idempotent) {
    // As the Java producer: idempotence needs acks=all; asked for explicitly, that is an error.
    if (idempotence_asked) throw UsageError("enable.idempotence=true needs --acks all");
    opts.idempotent = false;
  }
  opts.linger = std::chrono::milliseconds(config.int_or("linger.ms", 5));
  int64_t batch_size = config.int_or("batch.size", 1000000);
  if (batch_size < 1) throw UsageError("-X batch.size must be positive");
  opts.batch_size = static_cast<size_t>(batch_size);
  int64_t in_flight = config.int_or("max.in.flight.requests.per.connection", 1);
  if (in_flight < 1 || (opts.idempotent && in_flight > 5))
    throw UsageError("-X max.in.flight.requests.per.connection is 1 to 5 with idempotence, at least 1 without");
  opts.max_in_flight = static_cast<size_t>(in_flight);
  if (config.is_set("retries")) opts.retries = config.retries();
  opts.delivery_timeout = std::chrono::milliseconds(config.int_or("delivery.timeout.ms", 120000));
  std::optional<int32_t> partition;
  if (args.has("partition")) partition = static_cast<int32_t>(*args.get_int("partition"));
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  for (const auto& h : args.all("header")) {
    auto [k, v] = split_key_value(h, "-H");
    headers.emplace_back(k, v);
  }
  std::string key_sep = args.get("key-delimiter");
  if (args.has("key-delimiter") && key_sep.empty()) throw UsageError("-K needs a non-empty separator");

  int fd = 0;
  if (args.has("input")) {
    fd = ::open(args.get("input").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw UsageError("cannot open " + args.get("input"));
  }
  Cluster cluster(config);
  Producer producer(cluster, opts);
  LineReader reader(fd);
  Progress progress("produced");
  std::string line;
  uint64_t line_no = 0;
  for (;;) {
    auto wait = producer.time_to_linger().value_or(std::chrono::milliseconds(-1));
    auto status = reader.next(line, wait);
    if (status == LineReader::Status::eof) break;
    if (status == LineReader::Status::timeout) {
      producer.poll();
      continue;
    }
    ++line_no;
    ProducerRecord r;
    r.topic = topic;
    r.partition = partition;
    r.headers = headers;
    if (format == "json") {
      if (line.empty()) continue;
      parse_json_record(line, line_no, r);
    } else if (!key_sep.empty()) {
      auto at = line.find(key_sep);
      if (at == std::string::npos) {
        r.value = line;  // no separator: an unkeyed record, as kcat does
      } else {
        r.key = line.substr(0, at);
        r.value = line.substr(at + key_sep.size());
      }
    } else {
      r.value = line;
    }
    producer.send(std::move(r));
    progress.update(producer.records_sent(), producer.bytes_sent());
  }
  producer.flush();
  progress.finish(producer.records_sent(), producer.bytes_sent());
  if (fd != 0) ::close(fd);
  return kExitOk;
}

}  // namespace runnel::cli
