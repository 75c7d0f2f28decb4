// The metadata store's own errors (I/O errors keep their std::errc).
#pragma once

#include <system_error>

namespace runnel::cluster {

enum class ClusterErrc {
  lease_not_found = 1,  // revoked or expired (etcd: "requested lease not found")
  compacted,            // a watch asked for history the store no longer has
  unavailable,          // no endpoint answered (every etcd endpoint down or timed out)
  bad_response,         // an answer that is not what the protocol says
  corrupt_file,         // a metadata file in the log dir that does not parse
};

const std::error_category& cluster_category();
inline std::error_code make_error_code(ClusterErrc e) { return {static_cast<int>(e), cluster_category()}; }

}  // namespace runnel::cluster

template <>
struct std::is_error_code_enum<runnel::cluster::ClusterErrc> : std::true_type {};
