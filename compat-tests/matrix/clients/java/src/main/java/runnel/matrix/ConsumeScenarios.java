package runnel.matrix;

import static runnel.matrix.Kit.check;
import static runnel.matrix.Kit.checkEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/** Where a consumer starts: earliest, latest, a timestamp. */
final class ConsumeScenarios {
    private ConsumeScenarios() {}

    static String earliest(Kit kit) throws Exception {
        String topic = kit.name("earliest");
        kit.createTopic(topic, 1);
        kit.produceValues(topic, 10);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kit.consumerProps(kit.name("g-earliest"),
                Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest")))) {
            c.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> got = Kit.pollUntil(c, 10, Kit.WAIT);
            checkEquals(Kit.expectedValues(10), Kit.values(got), "values read by a new group");
            checkEquals(0L, got.get(0).offset(), "first offset");
        }
        return "a new group with auto.offset.reset=earliest read offsets 0..9";
    }

    static String latest(Kit kit) throws Exception {
        String topic = kit.name("latest");
        kit.createTopic(topic, 1);
        kit.produceValues(topic, 5);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kit.consumerProps(kit.name("g-latest"),
                Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest")))) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Kit.WAIT.toNanos();
            List<ConsumerRecord<String, String>> early = new ArrayList<>();
            while (c.assignment().isEmpty() && System.nanoTime() < deadline) c.poll(Duration.ofMillis(200)).forEach(early::add);
            check(!c.assignment().isEmpty(), "no partition assigned within " + Kit.WAIT.toSeconds() + " s");
            // position() resolves the reset, so the consumer is positioned
            // before the new records exist.
            checkEquals(5L, c.position(tp, Kit.WAIT), "position after reset to latest");
            List<ProducerRecord<String, String>> fresh = new ArrayList<>();
            for (int i = 0; i < 5; i++) fresh.add(new ProducerRecord<>(topic, 0, null, "new" + i));
            kit.produce(fresh, Map.of(ProducerConfig.ACKS_CONFIG, "all"));
            List<ConsumerRecord<String, String>> got = Kit.pollUntil(c, 5, Kit.WAIT);
            got.addAll(0, early);
            checkEquals(List.of("new0", "new1", "new2", "new3", "new4"), Kit.values(got), "values read");
            checkEquals(5L, got.get(0).offset(), "first offset read");
        }
        return "positioned at 5 (end), read only the 5 records produced afterwards";
    }

    static String timestamp(Kit kit) throws Exception {
        String topic = kit.name("timestamp");
        kit.createTopic(topic, 1);
        long base = System.currentTimeMillis() - 600_000L;
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < 10; i++) records.add(new ProducerRecord<>(topic, 0, base + i * 1000L, null, "v" + i));
        kit.produce(records, Map.of(ProducerConfig.ACKS_CONFIG, "all"));
        TopicPartition tp = new TopicPartition(topic, 0);

        // Admin's ListOffsets by timestamp: the first record at or after it.
        ListOffsetsResult.ListOffsetsResultInfo info =
                Kit.get(kit.admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(base + 4500))).partitionResult(tp));
        checkEquals(5L, info.offset(), "Admin.listOffsets(forTimestamp(t4 + 500 ms)) offset");
        checkEquals(base + 5000, info.timestamp(), "Admin.listOffsets timestamp");

        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kit.consumerProps(null, Map.of()))) {
            Map<TopicPartition, OffsetAndTimestamp> found = c.offsetsForTimes(Map.of(tp, base + 3000L), Kit.WAIT);
            checkEquals(3L, found.get(tp) == null ? null : found.get(tp).offset(), "offsetsForTimes(t3) offset");
            checkEquals(base + 3000, found.get(tp).timestamp(), "offsetsForTimes(t3) timestamp");
            Map<TopicPartition, OffsetAndTimestamp> beyond = c.offsetsForTimes(Map.of(tp, base + 60_000L), Kit.WAIT);
            checkEquals(null, beyond.get(tp), "offsetsForTimes after the last record");
            c.assign(List.of(tp));
            c.seek(tp, found.get(tp).offset());
            List<ConsumerRecord<String, String>> got = Kit.pollUntil(c, 7, Kit.WAIT);
            checkEquals(List.of("v3", "v4", "v5", "v6", "v7", "v8", "v9"), Kit.values(got), "values read from t3");
        }
        return "listOffsets(t4+500ms)=5, offsetsForTimes(t3)=3, after the end=none; read v3..v9 after the seek";
    }
}
