package runnel.matrix;

import static runnel.matrix.Kit.check;
import static runnel.matrix.Kit.checkEquals;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * The security columns (run_matrix.py --security): each scenario reaches
 * the broker over one listener only, as the --security file describes it
 * (flattened by pylib/security_properties.py to "column.key=value", with
 * the Java client's settings for it).
 */
final class SecurityScenarios {
    private SecurityScenarios() {}

    static final int N = 20;  // records per partition

    /**
     * The columns of the flattened --security file, in its order: id -> its
     * keys ("client.*": the Java client's settings).
     */
    static Map<String, Map<String, String>> columns(Properties flat) {
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        for (String id : flat.getProperty("columns").split(",")) {
            Map<String, String> c = new TreeMap<>();
            for (String k : flat.stringPropertyNames()) {
                if (k.startsWith(id + ".")) c.put(k.substring(id.length() + 1), flat.getProperty(k));
            }
            out.put(id, c);
        }
        return out;
    }

    /**
     * Over the column's listener: Admin creates a topic (2 partitions) and
     * sees it, the cluster advertised on this listener; acks=all produce of
     * N records to each partition; a group consumer reads them exactly,
     * commits, reads its committed offsets back; Admin lists the group and
     * its committed offsets.
     */
    static String roundTrip(String id, Map<String, String> column) throws Exception {
        Properties client = new Properties();
        for (Map.Entry<String, String> e : column.entrySet()) {
            if (e.getKey().startsWith("client.")) client.put(e.getKey().substring("client.".length()), e.getValue());
        }
        try (Kit kit = new Kit(column.get("bootstrap"), client)) {
            String topic = kit.name(id);
            String group = kit.name(id + "-group");
            kit.createTopic(topic, 2);
            for (Node n : Kit.get(kit.admin.describeCluster().nodes())) {
                checkEquals(kit.port, n.port(), "port broker " + n.id() + " is advertised on");
            }
            List<ProducerRecord<String, String>> records = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                for (int i = 0; i < N; i++) records.add(new ProducerRecord<>(topic, p, null, "p" + p + "-v" + i));
            }
            List<RecordMetadata> acks = kit.produce(records, Map.of(ProducerConfig.ACKS_CONFIG, "all"));
            for (int i = 0; i < acks.size(); i++) {
                checkEquals((long) (i % N), acks.get(i).offset(), "offset of record " + i);
            }
            Set<TopicPartition> tps = Set.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kit.consumerProps(group, Map.of()))) {
                c.subscribe(List.of(topic));
                List<ConsumerRecord<String, String>> got = Kit.pollUntil(c, 2 * N, Kit.WAIT);
                List<String> want = new ArrayList<>();
                for (ProducerRecord<String, String> r : records) want.add(r.value());
                checkEquals(want, Kit.values(got), "records consumed by the group");
                c.commitSync(Kit.WAIT);
                Map<TopicPartition, OffsetAndMetadata> committed = c.committed(tps, Kit.WAIT);
                for (TopicPartition tp : tps) checkEquals((long) N, committed.get(tp).offset(), "committed offset of " + tp);
            }
            boolean listed = false;
            for (GroupListing g : Kit.get(kit.admin.listGroups().all())) listed |= g.groupId().equals(group);
            check(listed, "group " + group + " not listed");
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    Kit.get(kit.admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
            for (TopicPartition tp : tps) checkEquals((long) N, offsets.get(tp).offset(), "Admin's committed offset of " + tp);
            return column.get("listener") + ": " + 2 * N + " records over " + column.get("security_protocol")
                    + ", committed " + N + "+" + N + ", group listed";
        }
    }
}
