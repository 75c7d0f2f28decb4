// advertised_controller: the live broker Metadata and DescribeCluster name.
#include <catch2/catch.hpp>

#include <set>

#include "broker/advertised_controller.h"
#include "cluster/testing/registrations.h"

using namespace runnel;
using runnel::broker::advertised_controller;
using runnel::cluster::MetadataImage;
using runnel::cluster::testing::registered;

TEST_CASE("a live broker names itself, not the elected controller", "[advertised_controller]") {
  const MetadataImage image =
      MetadataImage().with_broker(registered(1)).with_broker(registered(2)).with_broker(registered(3)).with_controller(
          NodeId(1));
  CHECK(advertised_controller(image, NodeId(2)) == NodeId(2));
  CHECK(advertised_controller(image, NodeId(3)) == NodeId(3));
  CHECK(advertised_controller(image, NodeId(1)) == NodeId(1));
}

TEST_CASE("a broker not live in its image names a random live one, never a fenced one", "[advertised_controller]") {
  const MetadataImage image = MetadataImage()
                                  .with_broker(registered(1))
                                  .with_broker(registered(2, true))
                                  .with_broker(registered(3))
                                  .with_controller(NodeId(2));
  std::set<NodeId> named;
  // Itself fenced (2), or not registered at all (4): 1 and 3 both come up
  // in 200 draws but for a chance of 2^-199.
  for (int i = 0; i < 100; ++i) {
    named.insert(advertised_controller(image, NodeId(2)));
    named.insert(advertised_controller(image, NodeId(4)));
  }
  CHECK(named == std::set<NodeId>{NodeId(1), NodeId(3)});
}

TEST_CASE("no live broker: no controller (-1)", "[advertised_controller]") {
  CHECK(advertised_controller(MetadataImage(), NodeId(1)) == kNoNode);
  CHECK(advertised_controller(MetadataImage().with_broker(registered(1, true)), NodeId(1)) == kNoNode);
}
