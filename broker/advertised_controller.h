// The controller id a broker answers in Metadata and DescribeCluster.
//
// Kafka's KRaft brokers never name the active controller there: clients
// cannot reach the controller quorum (KIP-590), so a broker names a random
// live (unfenced) broker, and whichever broker receives a controller-bound
// request forwards it (KRaftMetadataCache.getControllerId and
// getRandomAliveBrokerId; KafkaApis' Metadata and DescribeCluster).
//
// Runnel's controller elected in etcd is not named either: every broker
// serves the admin requests clients send "to the controller" itself, writing
// to etcd by compare-and-swap, and the elected broker is the worst one to
// name after a crash. It stays elected and registered until its lease
// expires, a whole session, and clients sending to it wait that long
// (librdkafka's AdminClient took 10 s after a SIGKILL, Kafka's 4 s).
//
// Of the live brokers, the answering one is named: the client has just
// reached it, while any other may have died within its session. A broker
// that is not live in its own image (registering, or its lease lost) names
// a random live one, as Kafka's do, or none (-1) when there is none.
#pragma once

#include "base/ids.h"
#include "cluster/metadata_image.h"

namespace runnel::broker {

NodeId advertised_controller(const cluster::MetadataImage& image, NodeId self);

}  // namespace runnel::broker
