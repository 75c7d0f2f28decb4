#include "broker/topic_table.h"

#include <boost/json.hpp>

#include "broker/logging.h"
#include "storage/io.h"
#include "storage/uuid_text.h"

namespace runnel::broker {

namespace fs = std::filesystem;
namespace json = boost::json;
using protocol::ErrorCode;

namespace {

constexpr const char* kTopicsFile = "runnel-topics.json";
constexpr size_t kMaxNameLength = 249;  // Kafka's Topic.MAX_NAME_LENGTH

fs::path topics_file(const BrokerConfig& config) { return fs::path(config.log_dirs().front()) / kTopicsFile; }

}  // namespace

TopicTable::TopicTable(const BrokerConfig& config, storage::LogManager& logs) : config_(config), logs_(logs) {}

bool TopicTable::is_internal(const std::string& name) {
  return name == "__consumer_offsets" || name == "__transaction_state";
}

TopicError TopicTable::validate_name(const std::string& name) {
  if (name.empty()) return {ErrorCode::invalid_topic_exception, "Topic name is illegal, it can't be empty"};
  if (name == "." || name == "..")
    return {ErrorCode::invalid_topic_exception, "Topic name cannot be \".\" or \"..\""};
  if (name.size() > kMaxNameLength)
    return {ErrorCode::invalid_topic_exception,
            "Topic name is illegal, it can't be longer than " + std::to_string(kMaxNameLength) + " characters, topic name: " + name};
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return {ErrorCode::invalid_topic_exception,
              "Topic name \"" + name + "\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"};
  return {};
}

storage::LogConfig TopicTable::log_config(const BrokerConfig& config, const TopicOverrides& overrides) {
  std::map<std::string, std::string> props;
  for (auto name : storage::LogConfig::names()) {
    std::string n(name);
    if (find_topic_config(n)) props[n] = topic_config_value(config, overrides, n);
  }
  auto lc = storage::LogConfig::from_properties(props);
  if (!lc) throw std::logic_error("validated topic config rejected by storage: " + lc.error().message());
  return *lc;
}

std::error_code TopicTable::load() {
  fs::path file = topics_file(config_);
  if (!fs::exists(file)) return {};
  auto text = storage::read_whole_file(file);
  if (!text) return text.error();
  json::value doc;
  try {
    doc = json::parse(*text);
  } catch (const std::exception& e) {
    RLOG_ERROR("%s is not valid JSON: %s", file.c_str(), e.what());
    return storage::make_error_code(storage::StorageErrc::corrupt_checkpoint);
  }
  for (const auto& t : doc.at("topics").as_array()) {
    auto topic = std::make_shared<Topic>();
    topic->name = json::value_to<std::string>(t.at("name"));
    auto id = storage::uuid_from_base64(json::value_to<std::string>(t.at("id")));
    if (!id) return storage::make_error_code(storage::StorageErrc::corrupt_checkpoint);
    topic->id = *id;
    topic->internal = is_internal(topic->name);
    for (const auto& [k, v] : t.at("configs").as_object()) topic->overrides[std::string(k)] = json::value_to<std::string>(v);
    int64_t count = t.at("partitions").as_int64();
    for (int32_t p = 0; p < count; ++p) {
      auto part = open_partition(*topic, p);
      if (!part) return part.error();
      topic->partitions.push_back(*part);
    }
    by_id_[topic->id] = topic;
    by_name_[topic->name] = topic;
  }
  return {};
}

std::error_code TopicTable::save() const {
  json::array topics;
  for (const auto& [name, t] : by_name_) {
    json::object configs;
    for (const auto& [k, v] : t->overrides) configs[k] = v;
    topics.push_back(json::object{{"name", name},
                                  {"id", storage::uuid_to_base64(t->id)},
                                  {"partitions", static_cast<int64_t>(t->partitions.size())},
                                  {"configs", std::move(configs)}});
  }
  json::object doc{{"version", 1}, {"topics", std::move(topics)}};
  return storage::write_file_atomically(topics_file(config_), json::serialize(doc) + "\n");
}

Result<std::shared_ptr<Partition>> TopicTable::open_partition(const Topic& topic, int32_t index) {
  auto log = logs_.get_or_create({topic.name, index}, log_config(topic.overrides), topic.id);
  if (!log) return log.error();
  if ((*log)->leader_epochs().empty()) {
    auto ec = (*log)->assign_leader_epoch(0, (*log)->log_end_offset());
    if (ec) return ec;
  }
  auto part = std::make_shared<Partition>(topic.name, index, *log, config_.node_id());
  if (auto ec = part->load_producer_state(storage::wall_clock_ms(), config_.get_int("producer.id.expiration.ms")))
    return ec;
  return part;
}

std::shared_ptr<Topic> TopicTable::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::shared_ptr<Topic> TopicTable::find(const protocol::Uuid& id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

std::shared_ptr<Partition> TopicTable::partition(const std::string& topic, int32_t index) const {
  auto t = find(topic);
  if (!t || index < 0 || index >= static_cast<int32_t>(t->partitions.size())) return nullptr;
  return t->partitions[static_cast<size_t>(index)];
}

TopicError TopicTable::validate_new_topic(const std::string& name, int32_t& partitions, int16_t& replication_factor,
                                          const TopicOverrides& overrides) const {
  if (auto e = validate_name(name); !e.ok()) return e;
  if (find(name)) return {ErrorCode::topic_already_exists, "Topic '" + name + "' already exists."};
  if (partitions == -1) partitions = config_.get_int("num.partitions");
  if (partitions <= 0)
    return {ErrorCode::invalid_partitions, "Number of partitions was set to an invalid non-positive value."};
  if (replication_factor == -1) replication_factor = static_cast<int16_t>(config_.get_int("default.replication.factor"));
  if (replication_factor <= 0)
    return {ErrorCode::invalid_replication_factor, "Replication factor must be larger than 0, or -1 to use the default value."};
  if (replication_factor > 1)
    return {ErrorCode::invalid_replication_factor,
            "Unable to replicate the partition " + std::to_string(replication_factor) +
                " time(s): The target replication factor of " + std::to_string(replication_factor) +
                " cannot be reached because only 1 broker(s) are registered."};
  for (const auto& [k, v] : overrides)
    if (auto err = validate_topic_config(k, v); !err.empty()) return {ErrorCode::invalid_config, err};
  return {};
}

Result<std::shared_ptr<Topic>> TopicTable::create(const std::string& name, int32_t partitions,
                                                 const TopicOverrides& overrides, bool internal) {
  auto topic = std::make_shared<Topic>();
  topic->name = name;
  do {
    topic->id = storage::random_uuid();
  } while (by_id_.count(topic->id));
  topic->overrides = overrides;
  topic->internal = internal || is_internal(name);
  for (int32_t p = 0; p < partitions; ++p) {
    auto part = open_partition(*topic, p);
    if (!part) return part.error();
    topic->partitions.push_back(*part);
  }
  by_name_[name] = topic;
  by_id_[topic->id] = topic;
  if (auto ec = save()) return ec;
  RLOG_INFO("created topic %s with %d partition(s), id %s", name.c_str(), partitions,
            storage::uuid_to_base64(topic->id).c_str());
  return topic;
}

TopicError TopicTable::remove(const std::string& name) {
  auto topic = find(name);
  if (!topic) return {ErrorCode::unknown_topic_or_partition, "This server does not host this topic-partition."};
  by_name_.erase(name);
  by_id_.erase(topic->id);
  for (auto& p : topic->partitions) {
    if (auto ec = logs_.remove({name, p->index()}))
      RLOG_WARN("removing %s-%d: %s", name.c_str(), p->index(), ec.message().c_str());
    p->fetch_watchers().check_and_complete();  // after the log closed: waiting fetches see it gone
  }
  if (auto ec = save()) return {ErrorCode::kafka_storage_error, ec.message()};
  RLOG_INFO("deleted topic %s", name.c_str());
  return {};
}

TopicError TopicTable::add_partitions(const std::string& name, int32_t count) {
  auto topic = find(name);
  if (!topic) return {ErrorCode::unknown_topic_or_partition, "This server does not host this topic-partition."};
  int32_t current = static_cast<int32_t>(topic->partitions.size());
  if (count < current)
    return {ErrorCode::invalid_partitions, "Topic currently has " + std::to_string(current) +
                                               " partitions, which is higher than the requested " + std::to_string(count) + "."};
  if (count == current)
    return {ErrorCode::invalid_partitions, "Topic already has " + std::to_string(current) + " partitions."};
  for (int32_t p = current; p < count; ++p) {
    auto part = open_partition(*topic, p);
    if (!part) return {ErrorCode::kafka_storage_error, part.error().message()};
    topic->partitions.push_back(*part);
  }
  if (auto ec = save()) return {ErrorCode::kafka_storage_error, ec.message()};
  RLOG_INFO("topic %s grown to %d partitions", name.c_str(), count);
  return {};
}

void TopicTable::apply_broker_defaults() {
  for (auto& [name, topic] : by_name_) {
    auto lc = log_config(topic->overrides);
    for (auto& p : topic->partitions) p->log().set_config(lc);
  }
}

TopicError TopicTable::set_overrides(const std::string& name, TopicOverrides overrides) {
  auto topic = find(name);
  if (!topic) return {ErrorCode::unknown_topic_or_partition, "This server does not host this topic-partition."};
  topic->overrides = std::move(overrides);
  auto lc = log_config(topic->overrides);
  for (auto& p : topic->partitions) p->log().set_config(lc);
  if (auto ec = save()) return {ErrorCode::kafka_storage_error, ec.message()};
  return {};
}

}  // namespace runnel::broker
