package runnel.matrix;

import static runnel.matrix.Kit.check;
import static runnel.matrix.Kit.checkEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;

/** Producing: acks levels, record contents, codecs, idempotence. */
final class ProduceScenarios {
    private ProduceScenarios() {}

    static String acks(Kit kit, String acks) throws Exception {
        String topic = kit.name("acks" + acks);
        kit.createTopic(topic, 1);
        int n = 50;
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < n; i++) records.add(new ProducerRecord<>(topic, "v" + i));
        // Idempotence needs acks=all; the client's default turns it on, so
        // the lower levels say explicitly that they produce without it.
        List<RecordMetadata> reports = kit.produce(records, Map.of(
                ProducerConfig.ACKS_CONFIG, acks,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, acks.equals("all") ? "true" : "false"));
        for (int i = 0; i < n; i++) {
            RecordMetadata m = reports.get(i);
            if (acks.equals("0")) {
                check(!m.hasOffset(), "acks=0 delivery report " + i + " carries offset " + m.offset());
            } else {
                checkEquals((long) i, m.offset(), "offset in delivery report " + i);
            }
        }
        List<ConsumerRecord<String, String>> back = kit.readAll(topic, 1, n);
        checkEquals(Kit.expectedValues(n), Kit.values(back), "values read back");
        return n + " records, " + (acks.equals("0") ? "no offsets in reports (acks=0)" : "offsets 0.." + (n - 1) + " in reports")
                + ", read back in order";
    }

    static String keysHeadersTimestamps(Kit kit) throws Exception {
        String topic = kit.name("khts");
        kit.createTopic(topic, 1);
        long base = System.currentTimeMillis() - 3_600_000L;
        List<ProducerRecord<String, String>> sent = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            List<Header> headers = new ArrayList<>();
            if (i != 7) {  // record 7 has no headers at all
                headers.add(new RecordHeader("h", ("a" + i).getBytes(StandardCharsets.UTF_8)));
                headers.add(new RecordHeader("h", ("b" + i).getBytes(StandardCharsets.UTF_8)));  // repeated key
                headers.add(new RecordHeader("nul", (byte[]) null));
                headers.add(new RecordHeader("empty", new byte[0]));
            }
            String key = i == 3 ? null : "k" + i;
            String value = i == 5 ? null : "v" + i;  // a tombstone
            sent.add(new ProducerRecord<>(topic, 0, base + i * 7L, key, value, headers));
        }
        kit.produce(sent, Map.of(ProducerConfig.ACKS_CONFIG, "all"));
        List<ConsumerRecord<String, String>> back = kit.readAll(topic, 1, sent.size());
        checkEquals(sent.size(), back.size(), "records read back");
        for (int i = 0; i < sent.size(); i++) {
            ProducerRecord<String, String> s = sent.get(i);
            ConsumerRecord<String, String> r = back.get(i);
            checkEquals(s.key(), r.key(), "key of record " + i);
            checkEquals(s.value(), r.value(), "value of record " + i);
            checkEquals(s.timestamp(), r.timestamp(), "timestamp of record " + i);
            checkEquals(TimestampType.CREATE_TIME, r.timestampType(), "timestamp type of record " + i);
            checkEquals(headerList(s.headers().toArray()), headerList(r.headers().toArray()), "headers of record " + i);
        }
        return "10 records: keys (one null), null value, repeated/null/empty headers, create timestamps back exactly";
    }

    private static List<String> headerList(Header[] headers) {
        List<String> out = new ArrayList<>();
        for (Header h : headers) {
            out.add(h.key() + "=" + (h.value() == null ? "<null>" : Arrays.toString(h.value())));
        }
        return out;
    }

    static String compression(Kit kit, String codec) throws Exception {
        String topic = kit.name("codec-" + codec);
        kit.createTopic(topic, 1);
        int n = 300;
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String v = "value-" + i + "-" + "compressible ".repeat(i % 20);
            expected.add(v);
            records.add(new ProducerRecord<>(topic, "key-" + (i % 10), v));
        }
        kit.produce(records, Map.of(
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.COMPRESSION_TYPE_CONFIG, codec,
                ProducerConfig.LINGER_MS_CONFIG, "20"));
        List<ConsumerRecord<String, String>> back = kit.readAll(topic, 1, n);
        checkEquals(expected, Kit.values(back), "values read back");
        for (int i = 0; i < n; i++) checkEquals("key-" + (i % 10), back.get(i).key(), "key of record " + i);
        return n + " " + codec + "-compressed records read back exactly";
    }

    static String idempotent(Kit kit) throws Exception {
        String topic = kit.name("idempotent");
        kit.createTopic(topic, 1);
        int n = 1000;
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < n; i++) records.add(new ProducerRecord<>(topic, "v" + i));
        // Small batches so that several are in flight at once, each with its
        // own sequence number.
        List<RecordMetadata> reports = kit.produce(records, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5",
                ProducerConfig.BATCH_SIZE_CONFIG, "1024",
                ProducerConfig.LINGER_MS_CONFIG, "2"));
        for (int i = 0; i < n; i++) checkEquals((long) i, reports.get(i).offset(), "offset in delivery report " + i);
        List<ConsumerRecord<String, String>> back = kit.readAll(topic, 1, n);
        checkEquals(Kit.expectedValues(n), Kit.values(back), "values read back");
        return n + " records in small batches (5 in flight), offsets 0.." + (n - 1) + ", read back once in order";
    }
}
