#include "broker/group/consumer/consumer_group_member.h"

namespace runnel::broker::group::consumer {

MemberState member_state_from(int8_t value) {
  switch (value) {
    case 0:
      return MemberState::stable;
    case 1:
      return MemberState::unrevoked_partitions;
    case 2:
      return MemberState::unreleased_partitions;
    default:
      return MemberState::unknown;
  }
}

const char* member_state_name(MemberState s) {
  switch (s) {
    case MemberState::stable:
      return "STABLE";
    case MemberState::unrevoked_partitions:
      return "UNREVOKED_PARTITIONS";
    case MemberState::unreleased_partitions:
      return "UNRELEASED_PARTITIONS";
    case MemberState::unknown:
      break;
  }
  return "UNKNOWN";
}

}  // namespace runnel::broker::group::consumer
