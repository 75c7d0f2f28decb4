package runnel.matrix;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** What every scenario needs: unique names, one Admin, bounded produce and consume helpers. */
final class Kit implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(30);

    final String bootstrap;
    final String host;
    final int port;
    /** Node id -> host:port of every broker the harness started ($MATRIX_BROKERS; else node 1 at --bootstrap). */
    final Map<Integer, String> brokers = new java.util.TreeMap<>();
    final String runId = UUID.randomUUID().toString().substring(0, 8);
    /** A security column's client settings (security.protocol, ssl.*, sasl.*), added to every client's; else empty. */
    final Properties security;
    final Admin admin;

    Kit(String bootstrap) {
        this(bootstrap, new Properties());
    }

    Kit(String bootstrap, Properties security) {
        this.bootstrap = bootstrap;
        this.security = security;
        String first = bootstrap.split(",")[0];
        int colon = first.lastIndexOf(':');
        this.host = first.substring(0, colon);
        this.port = Integer.parseInt(first.substring(colon + 1));
        String spec = System.getenv("MATRIX_BROKERS");
        for (String entry : (spec == null || spec.isEmpty() ? "1@" + first : spec).split(",")) {
            int at = entry.indexOf('@');
            brokers.put(Integer.parseInt(entry.substring(0, at)), entry.substring(at + 1));
        }
        Properties p = new Properties();
        p.putAll(security);
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "java-matrix-admin");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        admin = Admin.create(p);
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(10));
    }

    /** A name no other scenario or run uses: java-<what>-<run id>. */
    String name(String what) {
        return "java-" + what.replace('_', '-') + "-" + runId;
    }

    // -- checks --------------------------------------------------------------

    static final class Failure extends RuntimeException {
        Failure(String message) {
            super(message);
        }
    }

    /** The client could express the scenario, but not here (e.g. it needs a cluster). */
    static final class Unsupported extends RuntimeException {
        Unsupported(String why) {
            super(why);
        }
    }

    boolean cluster() {
        return brokers.size() > 1;
    }

    /** Asks the harness, which reads stdout, to SIGKILL the partition's leader (and start it again). */
    static void killLeader(String scenario, String topic, int partition) {
        synchronized (System.out) {
            System.out.println("{\"event\": \"kill_leader\", \"scenario\": " + JavaClientDriver.json(scenario)
                    + ", \"topic\": " + JavaClientDriver.json(topic) + ", \"partition\": " + partition + "}");
            System.out.flush();
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new Failure(what);
    }

    static void checkEquals(Object expected, Object actual, String what) {
        if (expected == null ? actual != null : !expected.equals(actual)) {
            throw new Failure(what + ": expected " + expected + ", got " + actual);
        }
    }

    /** Polls until the condition holds, at most `limit`; fails with `what` after that. */
    static void waitFor(Duration limit, String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new Failure("timed out after " + limit.toSeconds() + " s waiting for " + what);
            Thread.sleep(100);
        }
    }

    static <T> T get(Future<T> f) throws Exception {
        try {
            return f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception) throw (Exception) e.getCause();
            throw e;
        }
    }

    static String describe(Throwable t) {
        if (t instanceof Failure) return t.getMessage();
        StringBuilder b = new StringBuilder(t.getClass().getSimpleName() + ": " + t.getMessage());
        for (Throwable c = t.getCause(); c != null && c != t; c = c.getCause()) {
            b.append(" <- ").append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
        }
        return b.toString();
    }

    // -- topics --------------------------------------------------------------

    /** Creates a topic, a replica on every broker, and waits until its metadata shows every partition with a leader. */
    void createTopic(String topic, int partitions) throws Exception {
        get(admin.createTopics(List.of(new NewTopic(topic, partitions, (short) brokers.size()))).all());
        waitFor(WAIT, "metadata of " + topic, () -> partitionsWithLeader(topic) == partitions);
    }

    /** Partitions of the topic that have a leader, per Admin metadata; -1 if unknown. */
    int partitionsWithLeader(String topic) {
        try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
            return (int) d.partitions().stream().filter(p -> p.leader() != null && !p.leader().isEmpty()).count();
        } catch (Exception e) {
            return -1;
        }
    }

    // -- produce -------------------------------------------------------------

    Properties producerProps(Map<String, String> extra) {
        Properties p = new Properties();
        p.putAll(security);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "java-matrix-producer");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        p.putAll(extra);
        return p;
    }

    /** Sends the records with one producer, waits for every delivery report, returns them in send order. */
    List<RecordMetadata> produce(List<ProducerRecord<String, String>> records, Map<String, String> extra) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(extra))) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (ProducerRecord<String, String> r : records) sent.add(producer.send(r));
            producer.flush();
            List<RecordMetadata> out = new ArrayList<>();
            for (Future<RecordMetadata> f : sent) out.add(get(f));
            return out;
        }
    }

    /** Values v0..v(n-1) to partition 0 of the topic, acks=all. */
    List<RecordMetadata> produceValues(String topic, int n) throws Exception {
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < n; i++) records.add(new ProducerRecord<>(topic, 0, null, "v" + i));
        return produce(records, Map.of(ProducerConfig.ACKS_CONFIG, "all"));
    }

    // -- consume -------------------------------------------------------------

    Properties consumerProps(String group, Map<String, String> extra) {
        Properties p = new Properties();
        p.putAll(security);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "java-matrix-consumer");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
        if (group != null) p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.putAll(extra);
        return p;
    }

    /**
     * Reads every partition of the topic from the beginning, without a group,
     * until `count` records arrived (or WAIT passed); sorted by partition, offset.
     */
    List<ConsumerRecord<String, String>> readAll(String topic, int partitions, int count) throws Exception {
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(null, Map.of()))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(topic, p));
            c.assign(tps);
            c.seekToBeginning(tps);
            return pollUntil(c, count, WAIT);
        }
    }

    /** Polls until at least `count` records arrived or `limit` passed; then one more short poll for extras. */
    static List<ConsumerRecord<String, String>> pollUntil(KafkaConsumer<String, String> c, int count, Duration limit) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.nanoTime() + limit.toNanos();
        while (out.size() < count && System.nanoTime() < deadline) {
            c.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        if (out.size() >= count) c.poll(Duration.ofMillis(300)).forEach(out::add);
        out.sort(Comparator.<ConsumerRecord<String, String>>comparingInt(ConsumerRecord::partition)
                .thenComparingLong(ConsumerRecord::offset));
        return out;
    }

    static List<String> values(Collection<ConsumerRecord<String, String>> records) {
        List<String> out = new ArrayList<>();
        for (ConsumerRecord<String, String> r : records) out.add(r.value());
        return out;
    }

    static List<String> expectedValues(int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add("v" + i);
        return out;
    }
}
