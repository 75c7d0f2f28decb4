// DescribeLogDirs (key 35): each log directory of this broker and the
// partition replicas in it, with their sizes. Kafka 4.x serves v1+; v2 is
// flexible, v3 adds a top-level error code, v4 each directory's total and
// usable bytes (statvfs of the directory's file system). A dir that went
// offline after an I/O error answers KAFKA_STORAGE_ERROR with nothing in it.
//
// A null topic list describes every partition; otherwise only the named
// partitions that exist. The offset lag is the high watermark minus the
// log end offset, floored at 0: always 0 for a leader. No replica is ever
// being moved between directories here, so IsFutureKey is false.
#include <sys/statvfs.h>

#include <algorithm>
#include <map>
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

namespace fs = std::filesystem;
using p::ErrorCode;
using Result_ = p::DescribeLogDirsResponse::DescribeLogDirsResult;
using TopicResult_ = Result_::DescribeLogDirsTopic;

fs::path normal(const fs::path& p) { return fs::absolute(p).lexically_normal(); }

void fill_space(Result_& r, const fs::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return;  // left at -1, as for an offline dir
  r.total_bytes = static_cast<int64_t>(st.f_blocks) * static_cast<int64_t>(st.f_frsize);
  r.usable_bytes = static_cast<int64_t>(st.f_bavail) * static_cast<int64_t>(st.f_frsize);
}

}  // namespace

template <>
awaitable<p::DescribeLogDirsResponse> handle<p::DescribeLogDirsApi>(RequestContext& ctx, p::DescribeLogDirsRequest& req) {
  Broker& b = ctx.broker;
  const int16_t v = ctx.api_version();
  p::DescribeLogDirsResponse resp;
  // Kafka: DESCRIBE on the cluster, else no results (and the error, v3+).
  if (!authorized_on_cluster(ctx, AclOperation::describe)) {
    resp.error_code = p::code(p::ErrorCode::cluster_authorization_failed);
    co_return resp;
  }

  std::set<std::pair<std::string, int32_t>> wanted;
  if (req.topics)
    for (const auto& t : *req.topics)
      for (int32_t part : t.partitions) wanted.insert({t.topic, part});

  // Every hosted partition, grouped by log dir, then by topic.
  std::map<fs::path, std::map<std::string, std::vector<std::shared_ptr<Partition>>>> by_dir;
  b.replica_manager().for_each_partition([&](const std::shared_ptr<Partition>& part) {
    if (req.topics && !wanted.count({part->topic(), part->index()})) return;
    by_dir[normal(part->log().dir().parent_path())][part->topic()].push_back(part);
  });

  for (size_t i = 0; i < b.logs().log_dirs().size(); ++i) {
    const auto& dir = b.logs().log_dirs()[i];
    Result_ r;
    r.log_dir = normal(dir).string();
    if (b.logs().dir_offline(i)) {
      // Kafka: KAFKA_STORAGE_ERROR, no partitions, sizes unknown (-1).
      r.error_code = p::code(ErrorCode::kafka_storage_error);
      resp.results.push_back(std::move(r));
      continue;
    }
    r.error_code = p::code(ErrorCode::none);
    for (const auto& [name, parts] : by_dir[normal(dir)]) {
      TopicResult_ tr;
      tr.name = name;
      for (const auto& part : parts) {
        const replication::OffsetSnapshot offsets = part->offset_snapshot();
        TopicResult_::DescribeLogDirsPartition pr;
        pr.partition_index = part->index();
        pr.partition_size = part->log().size_bytes();
        // Kafka's getLogEndOffsetLag: a leader is never behind itself.
        pr.offset_lag = std::max<int64_t>(0, offsets.high_watermark - offsets.log_end_offset);
        pr.is_future_key = false;
        tr.partitions.push_back(pr);
      }
      r.topics.push_back(std::move(tr));
    }
    if (v >= 4) fill_space(r, dir);
    resp.results.push_back(std::move(r));
  }
  co_return resp;
}

}  // namespace runnel::broker
