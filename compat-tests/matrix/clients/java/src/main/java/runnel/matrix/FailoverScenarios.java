package runnel.matrix;

import static runnel.matrix.Kit.check;
import static runnel.matrix.Kit.checkEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/** The cluster-only scenario: the partition leader killed while producing and consuming. */
final class FailoverScenarios {
    private FailoverScenarios() {}

    static final int BEFORE = 100; // acknowledged before the kill is asked for
    static final int AFTER = 100;  // acknowledged after a new leader is named
    static final long EVERY_MS = 5;

    /** The partition's leader id and ISR size, or null while unknown. */
    private static TopicPartitionInfo partition0(Kit kit, String topic) {
        try {
            TopicDescription d = kit.admin.describeTopics(List.of(topic)).allTopicNames().get(5, TimeUnit.SECONDS).get(topic);
            return d.partitions().get(0);
        } catch (Exception e) {
            return null; // e.g. the request went to the broker just killed: ask again
        }
    }

    /**
     * One partition on every broker; an idempotent acks=all producer sends a
     * record every 5 ms while an assigned consumer (same thread) reads; after
     * 100 acknowledgements the harness kills the leader. Producing goes on
     * until a new leader is named and 100 more are acknowledged; then every
     * record sent must have been acknowledged and consumed exactly once, in order.
     */
    static String leaderFailover(Kit kit) throws Exception {
        if (!kit.cluster()) throw new Kit.Unsupported("needs a cluster: the harness runs it with run_matrix.py --cluster");
        String topic = kit.name("leader-failover");
        kit.createTopic(topic, 1);
        int n = kit.brokers.size();
        Kit.waitFor(Kit.WAIT, topic + "'s full ISR", () -> {
            TopicPartitionInfo p = partition0(kit, topic);
            return p != null && p.leader() != null && p.isr().size() == n;
        });
        int old = partition0(kit, topic).leader().id();

        List<String> sent = new ArrayList<>();
        Map<String, Long> acked = new ConcurrentHashMap<>();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        List<ConsumerRecord<String, String>> consumed = new ArrayList<>();
        TopicPartition tp = new TopicPartition(topic, 0);
        int newLeader = -1;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(kit.producerProps(Map.of(
                     ProducerConfig.ACKS_CONFIG, "all",
                     ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                     ProducerConfig.LINGER_MS_CONFIG, "1",
                     ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "80000")));
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(kit.consumerProps(null, Map.of()))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (acked.size() < BEFORE) {
                check(System.nanoTime() < deadline, acked.size() + " of " + BEFORE + " acknowledged before the kill");
                step(producer, consumer, topic, sent, acked, errors, consumed);
            }
            Kit.killLeader("leader_failover", topic, 0);
            long killed = System.nanoTime();
            long checked = 0;
            int ackedAtChange = -1;
            while (ackedAtChange < 0 || acked.size() < ackedAtChange + AFTER) {
                check(System.nanoTime() < killed + TimeUnit.SECONDS.toNanos(60), "60 s after the kill: new leader "
                        + newLeader + ", " + acked.size() + " acknowledged, errors " + errors);
                step(producer, consumer, topic, sent, acked, errors, consumed);
                if (newLeader < 0 && System.nanoTime() - checked > TimeUnit.MILLISECONDS.toNanos(250)) {
                    checked = System.nanoTime();
                    TopicPartitionInfo p = partition0(kit, topic);
                    if (p != null && p.leader() != null && p.leader().id() != old) {
                        newLeader = p.leader().id();
                        ackedAtChange = acked.size();
                    }
                }
            }
            producer.flush();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (consumed.size() < sent.size() && System.nanoTime() < end) {
                consumer.poll(Duration.ofMillis(200)).forEach(consumed::add);
            }
        }
        check(errors.isEmpty(), errors.size() + " delivery errors: " + errors);
        checkEquals(sent.size(), acked.size(), "records acknowledged");
        List<String> values = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        for (ConsumerRecord<String, String> r : consumed) {
            values.add(r.value());
            offsets.add(r.offset());
        }
        check(values.equals(sent), "consumed " + values.size() + " records, sent " + sent.size()
                + " (not the same sequence: lost, duplicated or reordered)");
        List<Long> ackedOffsets = new ArrayList<>();
        for (String v : sent) ackedOffsets.add(acked.get(v));
        checkEquals(ackedOffsets, offsets, "acknowledged offsets vs consumed ones");
        return sent.size() + " records, leader " + old + " killed, " + newLeader
                + " took over: all acknowledged and consumed once, in order";
    }

    /** Sends one record, then polls the consumer for about EVERY_MS. */
    private static void step(KafkaProducer<String, String> producer, KafkaConsumer<String, String> consumer, String topic,
                             List<String> sent, Map<String, Long> acked, ConcurrentLinkedQueue<String> errors,
                             List<ConsumerRecord<String, String>> consumed) {
        String v = String.format("%s-%06d", topic, sent.size());
        sent.add(v);
        producer.send(new ProducerRecord<>(topic, 0, null, v), (md, e) -> {
            if (e != null) errors.add(e.toString());
            else acked.put(v, md.offset());
        });
        consumer.poll(Duration.ofMillis(EVERY_MS)).forEach(consumed::add);
    }
}
