// Test shorthand: a list of node ids from plain integers.
#pragma once

#include <vector>

#include "base/ids.h"

namespace runnel::cluster::testing {

inline std::vector<NodeId> ids(std::vector<int32_t> v) {
  std::vector<NodeId> out;
  for (auto n : v) out.push_back(NodeId(n));
  return out;
}

}  // namespace runnel::cluster::testing
