// Test shorthand: a broker's registration, live or fenced, without endpoints.
#pragma once

#include <cstdint>

#include "cluster/metadata_image.h"

namespace runnel::cluster::testing {

inline BrokerRegistration registered(int32_t id, bool fenced = false) {
  BrokerRegistration b;
  b.id = NodeId(id);
  b.fenced = fenced;
  return b;
}

}  // namespace runnel::cluster::testing
