package runnel.matrix;

import static runnel.matrix.Kit.check;
import static runnel.matrix.Kit.checkEquals;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/** Cluster metadata and the Admin API: topics, configs, partitions, records. */
final class AdminScenarios {
    private AdminScenarios() {}

    static String metadata(Kit kit) throws Exception {
        DescribeClusterResult cluster = kit.admin.describeCluster();
        Collection<Node> nodes = Kit.get(cluster.nodes());
        Map<Integer, String> listed = new java.util.TreeMap<>();
        for (Node node : nodes) listed.put(node.id(), node.host() + ":" + node.port());
        checkEquals(kit.brokers, listed, "brokers in the cluster (id -> host:port)");
        check(Kit.get(cluster.clusterId()) != null, "no cluster id");
        int controller = Kit.get(cluster.controller()).id();
        check(kit.brokers.containsKey(controller), "controller id (as a client sees it) " + controller + " not a broker");

        String topic = kit.name("metadata");
        kit.createTopic(topic, 2);
        int n = kit.brokers.size();
        // The consumer's metadata path (Metadata request) as well as Admin's.
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kit.consumerProps(null, Map.of()))) {
            // A new replica joins the ISR once it has fetched: wait for it.
            Kit.waitFor(Kit.WAIT, "every partition's ISR to hold all " + n + " replicas", () ->
                    c.partitionsFor(topic, Kit.WAIT).stream().allMatch(p -> p.inSyncReplicas().length == n));
            List<PartitionInfo> parts = c.partitionsFor(topic, Kit.WAIT);
            checkEquals(2, parts.size(), "partitions of the topic");
            for (PartitionInfo p : parts) {
                check(kit.brokers.containsKey(p.leader().id()), "leader of partition " + p.partition() + ": " + p.leader());
                checkEquals(n, p.replicas().length, "replicas of partition " + p.partition());
            }
            check(c.listTopics(Kit.WAIT).containsKey(topic), "topic missing from listTopics");
        }
        return "brokers " + listed.keySet() + ", controller " + controller + "; topic with 2 partitions, "
                + n + " replicas each";
    }

    static String createDeleteTopics(Kit kit) throws Exception {
        String topic = kit.name("create-delete");
        Kit.get(kit.admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all());
        Kit.waitFor(Kit.WAIT, "the new topic's 3 partitions in metadata", () -> kit.partitionsWithLeader(topic) == 3);
        check(Kit.get(kit.admin.listTopics().names()).contains(topic), "created topic not listed");
        Kit.get(kit.admin.deleteTopics(List.of(topic)).all());
        Kit.waitFor(Kit.WAIT, "the deleted topic to leave the listing", () -> {
            try {
                return !kit.admin.listTopics().names().get(10, TimeUnit.SECONDS).contains(topic);
            } catch (Exception e) {
                return false;
            }
        });
        return "created with 3 partitions, listed and described, deleted, gone from the listing";
    }

    private static ConfigEntry topicConfig(Kit kit, String topic, String name) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = Kit.get(kit.admin.describeConfigs(List.of(r)).values().get(r));
        return config.get(name);
    }

    private static void waitForConfig(Kit kit, String topic, String name, String value) throws Exception {
        Kit.waitFor(Kit.WAIT, name + "=" + value, () -> {
            try {
                ConfigEntry e = topicConfig(kit, topic, name);
                return e != null && value.equals(e.value());
            } catch (Exception ex) {
                return false;
            }
        });
    }

    static String configs(Kit kit) throws Exception {
        String topic = kit.name("configs");
        kit.createTopic(topic, 1);
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        ConfigEntry retention = topicConfig(kit, topic, "retention.ms");
        check(retention != null, "retention.ms not described");
        checkEquals("604800000", retention.value(), "default retention.ms");
        checkEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, retention.source(), "source of default retention.ms");
        checkEquals("delete", topicConfig(kit, topic, "cleanup.policy").value(), "default cleanup.policy");

        Kit.get(kit.admin.incrementalAlterConfigs(Map.of(r, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET)))).all());
        waitForConfig(kit, topic, "retention.ms", "3600000");
        checkEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, topicConfig(kit, topic, "retention.ms").source(),
                "source of altered retention.ms");

        Kit.get(kit.admin.incrementalAlterConfigs(Map.of(r, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE)))).all());
        waitForConfig(kit, topic, "retention.ms", "604800000");
        checkEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, topicConfig(kit, topic, "retention.ms").source(),
                "source of retention.ms after DELETE");
        return "retention.ms 604800000 (default) -> SET 3600000 (dynamic topic config) -> DELETE -> default again";
    }

    static String growPartitions(Kit kit) throws Exception {
        String topic = kit.name("grow");
        kit.createTopic(topic, 1);
        Kit.get(kit.admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all());
        Kit.waitFor(Kit.WAIT, "3 partitions with leaders", () -> kit.partitionsWithLeader(topic) == 3);
        List<RecordMetadata> sent = kit.produce(List.of(new ProducerRecord<>(topic, 2, null, "to-new-partition")),
                Map.of(ProducerConfig.ACKS_CONFIG, "all"));
        checkEquals(2, sent.get(0).partition(), "partition of the record sent to the new partition");
        checkEquals(0L, sent.get(0).offset(), "its offset");
        List<ConsumerRecord<String, String>> back = kit.readAll(topic, 3, 1);
        checkEquals(List.of("to-new-partition"), Kit.values(back), "records read from the 3 partitions");
        return "1 -> 3 partitions, metadata shows 3, produced to and read from partition 2";
    }

    static String deleteRecords(Kit kit) throws Exception {
        String topic = kit.name("delete-records");
        kit.createTopic(topic, 1);
        kit.produceValues(topic, 10);
        TopicPartition tp = new TopicPartition(topic, 0);
        long low = Kit.get(kit.admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(tp)).lowWatermark();
        checkEquals(4L, low, "low watermark returned by deleteRecords");
        checkEquals(4L, Kit.get(kit.admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp)).offset(),
                "earliest offset (Admin.listOffsets)");
        checkEquals(10L, Kit.get(kit.admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp)).offset(),
                "latest offset (Admin.listOffsets)");
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kit.consumerProps(null, Map.of()))) {
            checkEquals(4L, c.beginningOffsets(Set.of(tp), Kit.WAIT).get(tp), "consumer's beginningOffsets");
        }
        List<ConsumerRecord<String, String>> back = kit.readAll(topic, 1, 6);
        List<String> expected = new ArrayList<>();
        for (int i = 4; i < 10; i++) expected.add("v" + i);
        checkEquals(expected, Kit.values(back), "records left");
        checkEquals(4L, back.get(0).offset(), "first offset read from the beginning");
        return "deleted before 4: low watermark 4, earliest 4, latest 10, reading from the beginning starts at v4";
    }
}
