package runnel.matrix;

import static runnel.matrix.Kit.check;
import static runnel.matrix.Kit.checkEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;

import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;

/** Transactions: commit, abort, fencing; consume-transform-produce with offsets in the transaction. */
final class TxnScenarios {
    private TxnScenarios() {}

    static KafkaProducer<String, String> transactional(Kit kit, String txnId) {
        Properties p = kit.producerProps(Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "30000"));
        return new KafkaProducer<>(p);
    }

    /** Sends the values, round-robin over `partitions` partitions (or all to 0), in the open transaction. */
    static List<Future<RecordMetadata>> send(KafkaProducer<String, String> p, String topic, int partitions, List<String> values) {
        List<Future<RecordMetadata>> out = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) out.add(p.send(new ProducerRecord<>(topic, i % partitions, null, values.get(i))));
        return out;
    }

    static List<String> tagged(String tag, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(tag + "-" + i);
        return out;
    }

    /** The values of partition `p` of records sent round-robin over `partitions`. */
    static List<String> onPartition(List<String> values, int partitions, int p) {
        List<String> out = new ArrayList<>();
        for (int i = p; i < values.size(); i += partitions) out.add(values.get(i));
        return out;
    }

    /**
     * Reads every partition from the beginning with the isolation level until
     * the consumer's position reaches the end offset (the last stable offset
     * for read_committed) of each; returns the values per partition.
     */
    static List<List<String>> readTo(Kit kit, String topic, int partitions, String isolation) throws Exception {
        Properties props = kit.consumerProps(null, Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation));
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props)) {
            List<TopicPartition> tps = new ArrayList<>();
            List<List<String>> out = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
                out.add(new ArrayList<>());
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps, Kit.WAIT);
            long deadline = System.nanoTime() + Kit.WAIT.toNanos();
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) done &= c.position(tp, Kit.WAIT) >= end.get(tp);
                if (done) break;
                check(System.nanoTime() < deadline, "timed out reading " + topic + " " + isolation + " to " + end);
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) out.get(r.partition()).add(r.value());
            }
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) out.get(r.partition()).add(r.value());
            return out;
        }
    }

    /** Waits until every partition's last stable offset (read_committed end) is `end`: the markers are written. */
    static void awaitStableEnd(Kit kit, String topic, int partitions, long end) throws InterruptedException {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < partitions; p++) latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
        ListOffsetsOptions committed = new ListOffsetsOptions(IsolationLevel.READ_COMMITTED);
        Kit.waitFor(Kit.WAIT, "last stable offset " + end + " on every partition of " + topic, () -> {
            try {
                return Kit.get(kit.admin.listOffsets(latest, committed).all()).values().stream()
                        .allMatch(info -> info.offset() == end);
            } catch (Exception e) {
                return false;
            }
        });
    }

    static String transactions(Kit kit) throws Exception {
        String topic = kit.name("txn");
        kit.createTopic(topic, 2);
        String txnId = kit.name("txn-id");
        List<String> first = tagged("commit1", 10), aborted = tagged("abort", 6), second = tagged("commit2", 8);
        String fenced;
        try (KafkaProducer<String, String> p = transactional(kit, txnId)) {
            p.initTransactions();
            p.beginTransaction();
            send(p, topic, 2, first);
            p.commitTransaction();
            p.beginTransaction();
            List<Future<RecordMetadata>> abortedSends = send(p, topic, 2, aborted);
            p.flush();  // in the log before the abort
            for (Future<RecordMetadata> f : abortedSends) Kit.get(f);
            p.abortTransaction();
            p.beginTransaction();
            send(p, topic, 2, second);
            p.commitTransaction();
            // EndTxn answers once PrepareCommit is in the transaction log;
            // the markers follow (in Kafka as here), so the last stable
            // offset reaches the end a moment later, on a cluster after the
            // marker's replication. Reading to the LSO before then would
            // stop short of commit2.
            awaitStableEnd(kit, topic, 2, first.size() / 2 + aborted.size() / 2 + second.size() / 2 + 3);

            for (int part = 0; part < 2; part++) {
                List<String> committed = new ArrayList<>(onPartition(first, 2, part));
                committed.addAll(onPartition(second, 2, part));
                List<String> all = new ArrayList<>(onPartition(first, 2, part));
                all.addAll(onPartition(aborted, 2, part));
                all.addAll(onPartition(second, 2, part));
                checkEquals(committed, readTo(kit, topic, 2, "read_committed").get(part), "read_committed values of partition " + part);
                checkEquals(all, readTo(kit, topic, 2, "read_uncommitted").get(part), "read_uncommitted values of partition " + part);
                long end = Kit.get(kit.admin.listOffsets(Map.of(new TopicPartition(topic, part),
                        OffsetSpec.latest())).all()).get(new TopicPartition(topic, part)).offset();
                checkEquals((long) all.size() + 3, end, "end offset of partition " + part + " (data records + 3 markers)");
            }

            // A second producer with the same transactional.id fences the first.
            try (KafkaProducer<String, String> p2 = transactional(kit, txnId)) {
                p2.initTransactions();
                KafkaException error = null;
                try {
                    p.beginTransaction();
                    Future<RecordMetadata> f = p.send(new ProducerRecord<>(topic, 0, null, "fenced"));
                    p.commitTransaction();
                    Kit.get(f);
                } catch (KafkaException e) {
                    error = e;
                }
                check(error != null, "the fenced producer's transaction committed");
                // Kafka 4.1.1 refuses the old epoch: the client raises
                // InvalidProducerEpochException (abortable) or ProducerFencedException.
                Throwable cause = error;
                while (!fencedError(cause) && cause.getCause() != null && cause.getCause() != cause) cause = cause.getCause();
                check(fencedError(cause), "fenced producer failed with " + Kit.describe(error));
                fenced = error.getClass().getSimpleName() + (cause != error ? " <- " + cause.getClass().getSimpleName() : "");
                try {
                    p.abortTransaction();
                    fenced += "; then abortTransaction() succeeded";
                } catch (KafkaException e) {
                    fenced += "; then abortTransaction() raised " + e.getClass().getSimpleName();
                }
                p2.beginTransaction();
                Future<RecordMetadata> f = p2.send(new ProducerRecord<>(topic, 0, null, "after-fence"));
                p2.commitTransaction();
                Kit.get(f);
            }
            p.close(Duration.ofSeconds(5));
        }
        return "committed 10, aborted 6, committed 8 over 2 partitions: read_committed 18 values, read_uncommitted 24, "
                + "end offsets count 3 markers each; same transactional.id fenced the first producer (" + fenced
                + "), the second committed";
    }

    static boolean fencedError(Throwable t) {
        return t instanceof ProducerFencedException || t instanceof InvalidProducerEpochException;
    }

    static String transactionsOffsets(Kit kit) throws Exception {
        String in = kit.name("txo-in"), out = kit.name("txo-out"), group = kit.name("txo-group");
        kit.createTopic(in, 1);
        kit.createTopic(out, 1);
        int n = 10, firstTxn = 6;
        kit.produceValues(in, n);
        TopicPartition tp = new TopicPartition(in, 0);
        Properties cp = kit.consumerProps(group, Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp);
             KafkaProducer<String, String> p = transactional(kit, kit.name("txo-id"))) {
            c.subscribe(List.of(in));
            List<ConsumerRecord<String, String>> input = Kit.pollUntil(c, n, Kit.WAIT);
            checkEquals(Kit.expectedValues(n), Kit.values(input), "input read by the group consumer");
            p.initTransactions();

            p.beginTransaction();
            for (ConsumerRecord<String, String> r : input.subList(0, firstTxn)) p.send(new ProducerRecord<>(out, 0, null, "out-" + r.value()));
            p.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(input.get(firstTxn - 1).offset() + 1)), c.groupMetadata());
            p.commitTransaction();

            p.beginTransaction();
            for (ConsumerRecord<String, String> r : input.subList(firstTxn, n)) p.send(new ProducerRecord<>(out, 0, null, "out-" + r.value()));
            p.flush();
            p.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(input.get(n - 1).offset() + 1)), c.groupMetadata());
            p.abortTransaction();

            OffsetAndMetadata committed = c.committed(Set.of(tp), Kit.WAIT).get(tp);
            check(committed != null, "no committed offset for " + tp);
            checkEquals((long) firstTxn, committed.offset(), "group's committed offset after the aborted transaction");
        }
        List<String> outputs = new ArrayList<>();
        for (String v : Kit.expectedValues(n)) outputs.add("out-" + v);
        checkEquals(outputs.subList(0, firstTxn), readTo(kit, out, 1, "read_committed").get(0), "output read_committed");
        checkEquals(outputs, readTo(kit, out, 1, "read_uncommitted").get(0), "output read_uncommitted");
        return "group consumer read 10; txn 1 wrote 6 outputs + offset 6 (sendOffsetsToTransaction with groupMetadata), committed; "
                + "txn 2 wrote 4 + offset 10, aborted: committed() = 6, output read_committed 6, read_uncommitted 10";
    }
}
