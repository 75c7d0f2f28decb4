import java.io.FileReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The Flume row's reading side in the security columns (see `run`): reads a
 * sink's topic back over the column's own listener with the kafka-clients
 * jar of the agent's classpath, started as a single-file program
 * (`java -cp <lib>/* SecurityReader.java PROPS TOPIC N [PROPS TOPIC N ...]`).
 * PROPS is the column's client settings (bootstrap.servers, security.protocol,
 * ssl.*, sasl.*). It assigns partition 0 from the beginning (no group: it
 * only checks what the sink delivered), polls until N records have come or
 * 60 s have passed, then 1 s more for any duplicate, and prints one JSON line
 * per topic: the records (offset, whether the key is null, value in base64),
 * the log start and end offsets, and the partition's leader as the listener
 * advertises it; or {"error": ...}.
 */
public class SecurityReader {
    public static void main(String[] args) {
        for (int i = 0; i + 2 < args.length; i += 3) {
            String line;
            try {
                line = read(args[i], args[i + 1], Integer.parseInt(args[i + 2]));
            } catch (Exception e) {
                line = "{\"error\": " + quote(e.toString()) + "}";
            }
            System.out.println(line);
            System.out.flush();
        }
    }

    static String read(String propsPath, String topic, int n) throws Exception {
        Properties p = new Properties();
        try (FileReader r = new FileReader(propsPath)) {
            p.load(r);
        }
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (got.size() < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(500))) got.add(rec);
            }
            long more = System.nanoTime() + 1_000_000_000L;
            while (System.nanoTime() < more) {
                for (ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(200))) got.add(rec);
            }
            long low = c.beginningOffsets(List.of(tp), Duration.ofSeconds(10)).get(tp);
            long high = c.endOffsets(List.of(tp), Duration.ofSeconds(10)).get(tp);
            StringBuilder out = new StringBuilder("{\"low\": " + low + ", \"high\": " + high + ", \"leaders\": [");
            String sep = "";
            for (PartitionInfo pi : c.partitionsFor(topic, Duration.ofSeconds(10))) {
                out.append(sep).append(quote(pi.partition() + "=" + pi.leader().id() + "@" + pi.leader().host()
                                             + ":" + pi.leader().port()));
                sep = ", ";
            }
            out.append("], \"records\": [");
            sep = "";
            for (ConsumerRecord<byte[], byte[]> rec : got) {
                String value = rec.value() == null ? "null" : quote(Base64.getEncoder().encodeToString(rec.value()));
                out.append(sep).append("[").append(rec.offset()).append(", ").append(rec.key() == null)
                   .append(", ").append(value).append("]");
                sep = ", ";
            }
            return out.append("]}").toString();
        }
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
            else b.append(ch);
        }
        return b.append('"').toString();
    }
}
