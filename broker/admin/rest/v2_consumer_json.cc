#include "broker/admin/rest/v2_consumer_json.h"

#include <charconv>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "broker/admin/rest/base64.h"
#include "broker/admin/rest/iso8601.h"

namespace runnel::broker::admin::rest {

namespace json = boost::json;

namespace {

constexpr int64_t kMaxRequestTimeoutMs = 300'000;

RestError unprocessable(std::string why) { return {422, std::move(why)}; }
RestError invalid_config(std::string why) { return {42204, "Invalid consumer configuration: " + std::move(why)}; }

// A config value as text: REST Proxy's fields are strings, and Jackson
// also takes numbers and booleans for them.
std::optional<std::string> text_of(const json::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  if (v.is_bool()) return v.get_bool() ? "true" : "false";
  return std::nullopt;
}

// The field under either of REST Proxy's spellings ("auto.offset.reset" or
// "auto_offset_reset"); null counts as absent.
const json::value* field(const json::object& o, std::string_view dotted) {
  if (const json::value* v = o.if_contains(dotted); v && !v->is_null()) return v;
  std::string underscored(dotted);
  for (char& c : underscored)
    if (c == '.') c = '_';
  if (const json::value* v = o.if_contains(underscored); v && !v->is_null()) return v;
  return nullptr;
}

std::optional<int64_t> number_of(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int32_t> partition_of(const json::object& o) {
  const json::value* p = o.if_contains("partition");
  if (!p || !p->is_int64() || p->get_int64() < 0 || p->get_int64() > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(p->get_int64());
}

std::optional<std::string> topic_of(const json::object& o) {
  const json::value* t = o.if_contains("topic");
  if (!t || !t->is_string() || t->get_string().empty()) return std::nullopt;
  return std::string(t->get_string());
}

json::value datum(const std::optional<std::string>& bytes, EmbeddedFormat format, bool& bad) {
  if (!bytes) return nullptr;
  if (format == EmbeddedFormat::binary) return json::string(base64_encode(*bytes));
  error_code ec;
  json::value v = json::parse(*bytes, ec);
  if (ec) bad = true;
  return v;
}

}  // namespace

std::variant<CreateConsumerRequest, RestError> parse_create_consumer(const json::value& body) {
  CreateConsumerRequest out;
  if (body.is_null()) return out;  // no body: every default
  const json::object* o = body.if_object();
  if (!o) return unprocessable("The request body must be a JSON object");
  if (const json::value* v = field(*o, "name")) {
    auto name = text_of(*v);
    if (!name || name->empty()) return invalid_config("name must be a non-empty string");
    out.name = std::move(*name);
  }
  if (const json::value* v = field(*o, "format")) {
    std::string upper = text_of(*v).value_or("");
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "BINARY") out.config.format = EmbeddedFormat::binary;
    else if (upper == "JSON") out.config.format = EmbeddedFormat::json;
    else if (upper == "AVRO" || upper == "JSONSCHEMA" || upper == "PROTOBUF")
      return RestError{422, "Invalid format type: " + upper + " needs a schema registry, which Runnel does not have."};
    else return RestError{422, "Invalid format type."};
  }
  // The consumer configs REST Proxy passes on: Kafka's ConfigException text.
  if (const json::value* v = field(*o, "auto.offset.reset")) {
    const std::string s = text_of(*v).value_or("");
    if (s == "earliest") out.config.auto_offset_reset = ConsumerInstanceConfig::Reset::earliest;
    else if (s == "latest") out.config.auto_offset_reset = ConsumerInstanceConfig::Reset::latest;
    else if (s == "none") out.config.auto_offset_reset = ConsumerInstanceConfig::Reset::none;
    else
      return invalid_config("Invalid value " + s +
                            " for configuration auto.offset.reset: String must be one of: latest, earliest, none");
  }
  if (const json::value* v = field(*o, "auto.commit.enable")) {
    std::string s = text_of(*v).value_or("");
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "true") out.config.auto_commit = true;
    else if (s == "false") out.config.auto_commit = false;
    else
      return invalid_config("Invalid value " + text_of(*v).value_or("") +
                            " for configuration enable.auto.commit: Expected value to be either true or false");
  }
  // REST Proxy's own settings for the instance's reads.
  if (const json::value* v = field(*o, "fetch.min.bytes")) {
    auto n = number_of(text_of(*v).value_or(""));
    if (!n || *n < -1 || *n > 10'000'000)
      return RestError{40001, "Invalid consumer configuration. It does not abide by the constraints: "
                              "fetch.min.bytes must be between -1 and 10000000"};
    out.config.fetch_min_bytes = *n;
  }
  if (const json::value* v = field(*o, "consumer.request.timeout.ms")) {
    auto n = number_of(text_of(*v).value_or(""));
    // At most 5 minutes: a read holds the instance, and its deletion waits.
    if (!n || *n < 0 || *n > kMaxRequestTimeoutMs)
      return invalid_config("consumer.request.timeout.ms must be between 0 and " + std::to_string(kMaxRequestTimeoutMs));
    out.config.request_timeout = std::chrono::milliseconds(*n);
  }
  return out;
}

std::variant<SubscriptionRequest, RestError> parse_subscription(const json::value& body) {
  const json::object* o = body.if_object();
  if (!o) return unprocessable("The request body must be a JSON object");
  SubscriptionRequest out;
  // As REST Proxy: topics win over a pattern given beside them, and a body
  // with neither changes nothing.
  const json::value* topics = o->if_contains("topics");
  const json::value* pattern = o->if_contains("topic_pattern");
  if (topics && !topics->is_null()) {
    if (!topics->is_array()) return unprocessable("topics must be a list of topic names");
    out.topics = std::vector<std::string>();
    for (const auto& t : topics->get_array()) {
      if (!t.is_string() || t.get_string().empty()) return unprocessable("topics must be a list of topic names");
      out.topics->emplace_back(t.get_string());
    }
    return out;
  }
  if (pattern && !pattern->is_null()) {
    if (!pattern->is_string() || pattern->get_string().empty())
      return unprocessable("topic_pattern must be a regular expression");
    out.topic_pattern = std::string(pattern->get_string());
  }
  return out;
}

std::variant<std::vector<TopicPartition>, RestError> parse_partitions(const json::value& body) {
  const json::object* o = body.if_object();
  const json::value* list = o ? o->if_contains("partitions") : nullptr;
  if (!list || !list->is_array()) return unprocessable("partitions must be a list of topic partitions");
  std::vector<TopicPartition> out;
  for (const auto& e : list->get_array()) {
    const json::object* eo = e.if_object();
    auto topic = eo ? topic_of(*eo) : std::nullopt;
    auto partition = eo ? partition_of(*eo) : std::nullopt;
    if (!topic || !partition) return unprocessable("a partition names its topic and partition number");
    out.emplace_back(std::move(*topic), *partition);
  }
  return out;
}

std::variant<std::map<TopicPartition, int64_t>, RestError> parse_offsets(const json::value& body) {
  const json::object* o = body.if_object();
  const json::value* list = o ? o->if_contains("offsets") : nullptr;
  if (!list || !list->is_array()) return unprocessable("offsets must be a list of topic partition offsets");
  std::map<TopicPartition, int64_t> out;
  for (const auto& e : list->get_array()) {
    const json::object* eo = e.if_object();
    auto topic = eo ? topic_of(*eo) : std::nullopt;
    auto partition = eo ? partition_of(*eo) : std::nullopt;
    const json::value* offset = eo ? eo->if_contains("offset") : nullptr;
    // The commit is of offset + 1: INT64_MAX has no next.
    if (!topic || !partition || !offset || !offset->is_int64() || offset->get_int64() < 0 ||
        offset->get_int64() == INT64_MAX)
      return unprocessable("an offset names its topic, partition number and offset");
    out[{std::move(*topic), *partition}] = offset->get_int64();
  }
  return out;
}

std::variant<SeekRequest, RestError> parse_seek(const json::value& body) {
  const json::object* o = body.if_object();
  if (!o) return unprocessable("The request body must be a JSON object with offsets or timestamps");
  SeekRequest out;
  if (const json::value* offsets = o->if_contains("offsets"); offsets && !offsets->is_null()) {
    auto parsed = parse_offsets(body);
    if (auto* e = std::get_if<RestError>(&parsed)) return *e;
    out.offsets = std::move(std::get<0>(parsed));
  }
  if (const json::value* list = o->if_contains("timestamps"); list && !list->is_null()) {
    if (!list->is_array()) return unprocessable("timestamps must be a list of topic partition timestamps");
    for (const auto& e : list->get_array()) {
      const json::object* eo = e.if_object();
      auto topic = eo ? topic_of(*eo) : std::nullopt;
      auto partition = eo ? partition_of(*eo) : std::nullopt;
      const json::value* ts = eo ? eo->if_contains("timestamp") : nullptr;
      std::optional<int64_t> ms;
      if (ts && ts->is_string()) ms = parse_instant(ts->get_string());
      if (ms && *ms < 0) ms.reset();  // before 1970: ListOffsets' special timestamps
      if (!topic || !partition || !ms)
        return unprocessable("a timestamp names its topic, partition number and an ISO 8601 timestamp");
      out.timestamps[{std::move(*topic), *partition}] = *ms;
    }
  }
  return out;
}

std::string create_consumer_answer(const std::string& instance_id, const std::string& base_uri) {
  return json::serialize(json::object{{"instance_id", instance_id}, {"base_uri", base_uri}});
}

std::string topics_answer(const std::vector<std::string>& topics) {
  json::array list;
  for (const auto& t : topics) list.emplace_back(t);
  return json::serialize(json::object{{"topics", std::move(list)}});
}

std::string partitions_answer(const std::vector<TopicPartition>& partitions) {
  json::array list;
  for (const auto& [topic, partition] : partitions) list.push_back(json::object{{"topic", topic}, {"partition", partition}});
  return json::serialize(json::object{{"partitions", std::move(list)}});
}

std::string committed_answer(const std::vector<TopicPartition>& asked,
                             const std::map<TopicPartition, std::pair<int64_t, std::string>>& committed) {
  json::array list;
  for (const auto& tp : asked) {
    auto it = committed.find(tp);
    if (it == committed.end()) continue;  // nothing committed: the Java consumer's committed() says null
    list.push_back(json::object{{"topic", tp.first},
                                {"partition", tp.second},
                                {"offset", it->second.first},
                                {"metadata", it->second.second}});
  }
  return json::serialize(json::object{{"offsets", std::move(list)}});
}

std::variant<std::string, RestError> records_answer(const std::vector<ConsumedRestRecord>& records,
                                                    EmbeddedFormat format) {
  json::array list;
  list.reserve(records.size());
  for (const auto& r : records) {
    bool bad = false;
    json::object o;
    o["topic"] = r.topic;
    o["key"] = datum(r.key, format, bad);
    o["value"] = datum(r.value, format, bad);
    o["partition"] = r.partition;
    o["offset"] = r.offset;
    if (bad)
      return RestError{50002, "Kafka error: the record at offset " + std::to_string(r.offset) + " of " + r.topic +
                                  "-" + std::to_string(r.partition) + " is not JSON"};
    list.push_back(std::move(o));
  }
  return json::serialize(list);
}

}  // namespace runnel::broker::admin::rest
