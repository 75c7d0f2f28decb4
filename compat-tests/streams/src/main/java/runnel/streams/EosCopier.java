package runnel.streams;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The read-process-write loop of compat-tests/exactly_once_kill_test.py in
 * the Java client (kafka-clients 4.1.1, transaction protocol v2 where the
 * broker finalizes it), written as Kafka's own EOS examples are.
 *
 *   EosCopier BOOTSTRAP INPUT OUTPUT GROUP
 *
 * Consumes INPUT as static member copier-1 of GROUP (read_committed, no
 * auto-commit); per poll (at most 25 records) begins a transaction, writes
 * key=value, value="out-"+value to OUTPUT's partition of the same number,
 * sends the consumer's next offsets to the transaction and commits. An
 * abortable error aborts and rewinds the consumer to the group's committed
 * offsets; a fatal one (fenced) exits 3, as an application should. SIGTERM
 * closes it cleanly.
 */
public final class EosCopier {
    private static final byte[] OUT = "out-".getBytes(StandardCharsets.US_ASCII);

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: EosCopier BOOTSTRAP INPUT OUTPUT GROUP");
            System.exit(2);
        }
        String bootstrap = args[0], input = args[1], output = args[2], group = args[3];
        Properties c = new Properties();
        c.put("bootstrap.servers", bootstrap);
        c.put("group.id", group);
        c.put("group.instance.id", "copier-1");
        c.put("enable.auto.commit", "false");
        c.put("isolation.level", "read_committed");
        c.put("auto.offset.reset", "earliest");
        c.put("session.timeout.ms", "6000");
        c.put("max.poll.records", "25");
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", "eos-copier");
        p.put("linger.ms", "5");
        p.put("transaction.timeout.ms", "10000");

        KafkaConsumer<byte[], byte[]> consumer =
            new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            consumer.wakeup();
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        int rc = 0;
        try {
            producer.initTransactions();
            consumer.subscribe(List.of(input));
            while (true) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                if (records.isEmpty()) continue;
                try {
                    copy(consumer, producer, records, output);
                } catch (WakeupException e) {
                    throw e;
                } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException
                         | UnsupportedVersionException e) {
                    System.err.println("copier: fatal " + e);
                    rc = 3;
                    break;
                } catch (KafkaException e) {
                    System.err.println("copier: aborting after " + e);
                    producer.abortTransaction();
                    rewind(consumer);
                }
            }
        } catch (WakeupException e) {
            // SIGTERM: leave what is open to the next instance's InitProducerId.
        } catch (KafkaException e) {
            System.err.println("copier: fatal " + e);
            rc = 3;
        } finally {
            producer.close(Duration.ofSeconds(5));
            consumer.close(Duration.ofSeconds(5));
            closed.countDown();
        }
        if (rc != 0) Runtime.getRuntime().halt(rc);
    }

    private static void copy(KafkaConsumer<byte[], byte[]> consumer, KafkaProducer<byte[], byte[]> producer,
                             ConsumerRecords<byte[], byte[]> records, String output) {
        producer.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            byte[] value = new byte[OUT.length + r.value().length];
            System.arraycopy(OUT, 0, value, 0, OUT.length);
            System.arraycopy(r.value(), 0, value, OUT.length, r.value().length);
            producer.send(new ProducerRecord<>(output, r.partition(), r.value(), value));
            next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        }
        producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
        while (true) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                // Retriable: the same commit is asked again (KafkaProducer's contract).
                System.err.println("copier: commit timed out, retrying: " + e);
            }
        }
    }

    /** After an abort: back to the group's committed offsets (the start where none). */
    private static void rewind(KafkaConsumer<byte[], byte[]> consumer) {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned, Duration.ofSeconds(30));
        for (TopicPartition tp : assigned) {
            OffsetAndMetadata o = committed.get(tp);
            if (o == null) consumer.seekToBeginning(List.of(tp));
            else consumer.seek(tp, o.offset());
        }
    }
}
