#include "broker/topic_table.h"

#include "broker/logging.h"
#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"
#include "storage/io.h"
#include "storage/uuid_text.h"

namespace runnel::broker {

namespace fs = std::filesystem;
using protocol::ErrorCode;

namespace {

constexpr size_t kMaxNameLength = 249;  // Kafka's Topic.MAX_NAME_LENGTH

}  // namespace

TopicTable::TopicTable(const BrokerConfig& config, replication::ReplicaManager& hosted)
    : config_(config), hosted_(hosted) {}

bool TopicTable::is_internal(const std::string& name) { return cluster::is_internal_topic(name); }

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

std::error_code TopicTable::load(const std::vector<cluster::KeyValue>& topics) {
  for (const auto& kv : topics) {
    auto decoded = cluster::decode_topic(kv.value);
    if (auto* why = std::get_if<std::string>(&decoded)) {
      RLOG_ERROR("topic record %s is not valid: %s", kv.key.c_str(), why->c_str());
      return storage::make_error_code(storage::StorageErrc::corrupt_checkpoint);
    }
    auto& record = std::get<cluster::TopicRecord>(decoded);
    auto topic = std::make_shared<Topic>();
    topic->name = std::move(record.name);
    topic->id = record.id;
    topic->internal = is_internal(topic->name);
    topic->overrides = std::move(record.configs);
    topic->config = topic_config(topic->overrides);
    topic->partition_count = record.partitions;
    by_id_[topic->id] = topic;
    by_name_[topic->name] = topic;
  }
  return {};
}

std::string TopicTable::record(const Topic& t) {
  return cluster::encode_topic(
      cluster::TopicRecord{t.name, t.id, t.partition_count, t.overrides, {}});
}

PartitionSpec TopicTable::partition_spec(const Topic& topic) const {
  return {topic.name, topic.id, topic.config.log, config_.node_id(),
          config_.get_int("producer.id.expiration.ms")};
}

std::shared_ptr<Topic> TopicTable::new_topic(const std::string& name, const TopicOverrides& overrides,
                                             bool internal) const {
  auto topic = std::make_shared<Topic>();
  topic->name = name;
  do {
    topic->id = storage::random_uuid();
  } while (by_id_.count(topic->id));
  topic->overrides = overrides;
  topic->config = topic_config(overrides);
  topic->internal = internal || is_internal(name);
  return topic;
}

void TopicTable::publish(std::shared_ptr<Topic> topic) {
  const std::string name = topic->name;
  by_id_[topic->id] = topic;
  by_name_[name] = std::move(topic);
  if (changed_) changed_(name);
}

void TopicTable::unpublish(const Topic& topic) {
  const std::string name = topic.name;  // `topic` may be owned by the table alone
  by_id_.erase(topic.id);
  by_name_.erase(name);
  if (changed_) changed_(name);
}

void TopicTable::grow(Topic& topic, int32_t count) {
  topic.partition_count = count;
  hosted_.set_log_config(topic.name, topic.config.log);
  if (changed_) changed_(topic.name);
}

void TopicTable::set_overrides(Topic& topic, TopicOverrides overrides) {
  topic.config = topic_config(overrides);
  topic.overrides = std::move(overrides);
  hosted_.set_log_config(topic.name, topic.config.log);
  if (changed_) changed_(topic.name);
}

std::shared_ptr<Topic> TopicTable::mirror(const cluster::TopicImage& image) {
  auto topic = find(image.name);
  const TopicOverrides overrides(image.configs.begin(), image.configs.end());
  const auto count = static_cast<int32_t>(image.partitions.size());
  if (!topic) {
    topic = std::make_shared<Topic>();
    topic->name = image.name;
    topic->id = image.id;
    topic->internal = image.internal || is_internal(image.name);
    topic->overrides = overrides;
    topic->config = topic_config(overrides);
    topic->partition_count = count;
    publish(topic);
    return topic;
  }
  if (topic->partition_count < count) topic->partition_count = count;
  if (topic->overrides != overrides) set_overrides(*topic, overrides);
  return topic;
}

bool TopicTable::has_partition(const std::string& name, int32_t index) const {
  auto t = find(name);
  return t && index >= 0 && index < t->partition_count;
}

std::shared_ptr<Topic> TopicTable::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::shared_ptr<Topic> TopicTable::find(const protocol::Uuid& id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

void TopicTable::apply_broker_defaults() {
  for (auto& [name, topic] : by_name_) {
    topic->config = topic_config(topic->overrides);
    hosted_.set_log_config(name, topic->config.log);
  }
}

}  // namespace runnel::broker
