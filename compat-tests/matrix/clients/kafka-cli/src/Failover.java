import static java.lang.String.valueOf;

import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.ObjectName;

/**
 * The cluster-only scenario with the console tools: kafka-console-producer
 * fed a line every 5 ms on its stdin (as `feeder | kafka-console-producer.sh`
 * would be) while kafka-console-consumer reads the partition from the start;
 * the harness kills the partition's leader meanwhile.
 *
 * The console producer reports no per-record acknowledgement (its callback
 * only logs failures), so, as for kcat, a line the consumer has printed
 * stands for one acknowledged (it is below the high watermark: the ISR has
 * it), and the producer's own failure count is read from its metrics, as
 * kafka-run-class.sh's JMX_PORT would show them to a user: the tool runs in
 * this JVM, so they are on its platform MBean server.
 */
final class Failover {
    private Failover() {}

    static final int BEFORE = 100; // lines consumed before the kill is asked for
    static final int AFTER = 100;  // lines consumed after kafka-topics names a new leader
    static final long EVERY_MS = 5;
    static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    /** Partition 0's leader (-1 for kafka-topics' "none") and sorted ISR. */
    record Partition(int leader, List<Integer> isr) {}

    private static final Pattern PARTITION0 =
            Pattern.compile("Partition:\\s*0\\s+Leader:\\s*(\\S+)\\s+Replicas:\\s*\\S*\\s+Isr:\\s*([\\d,]*)");

    /** kafka-topics --describe of partition 0, or null while it cannot answer (it asked the broker just killed). */
    static Partition partition0(CliDriver d, String topic) {
        Tools.Result r = Tools.run(Tools.TOPICS, null, "--bootstrap-server", d.b, "--describe", "--topic", topic);
        Matcher m = PARTITION0.matcher(r.out());
        if (r.status() != 0 || !m.find()) return null;
        int leader = m.group(1).matches("\\d+") ? Integer.parseInt(m.group(1)) : -1;
        List<Integer> isr = new ArrayList<>();
        for (String id : m.group(2).split(",")) if (!id.isEmpty()) isr.add(Integer.parseInt(id));
        isr.sort(null);
        return new Partition(leader, isr);
    }

    static String leaderFailover(CliDriver d) throws Exception {
        if (d.brokers.size() < 2) throw new Check.Unsupported("needs a cluster: the harness runs it with run_matrix.py --cluster");
        String topic = d.name("leader-failover");
        d.createTopic(topic, 1);
        List<Integer> ids = new ArrayList<>(d.brokers.keySet());
        Partition[] seen = new Partition[1];
        Check.waitFor(30_000, topic + "'s full ISR " + ids, () -> {
            seen[0] = partition0(d, topic);
            return seen[0] != null && seen[0].isr().equals(ids) && ids.contains(seen[0].leader());
        });
        int old = seen[0].leader();

        // The Java client's defaults where the tool sets its own: retries
        // (the tool's 3) and request timeout (its 1.5 s), so that only the
        // delivery timeout bounds a record's retries, as in the other
        // drivers; linger 5 ms (its 1 s would batch the whole run); acks=all
        // (its default too) and idempotence.
        String clientId = topic + "-producer";
        PipedOutputStream feed = new PipedOutputStream();
        PipedInputStream stdin = new PipedInputStream(feed, 1 << 20);
        Tools.Background producer = new Tools.Background(Tools.CONSOLE_PRODUCER, stdin, "--bootstrap-server", d.b,
                "--topic", topic, "--request-required-acks", "all", "--message-send-max-retries", valueOf(Integer.MAX_VALUE),
                "--request-timeout-ms", "30000", "--timeout", "5", "--producer-property", "enable.idempotence=true",
                "--producer-property", "delivery.timeout.ms=80000", "--producer-property", "client.id=" + clientId);
        Tools.Background consumer = new Tools.Background(Tools.CONSOLE_CONSUMER, "--bootstrap-server", d.b, "--topic", topic,
                "--partition", "0", "--offset", "earliest", "--property", "print.offset=true", "--timeout-ms", "120000");
        List<String> sent = new ArrayList<>();
        AtomicInteger newLeader = new AtomicInteger(-1);
        AtomicBoolean over = new AtomicBoolean();
        // kafka-topics asks from its own thread: one that tries the killed
        // broker first takes seconds, and the feeding must go on meanwhile.
        Thread watch = new Thread(() -> {
            try {
                while (newLeader.get() < 0 && !over.get()) {
                    Partition p = partition0(d, topic);
                    if (p != null && p.leader() >= 0 && p.leader() != old) newLeader.set(p.leader());
                    else Thread.sleep(500);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "leader-watch");
        watch.setDaemon(true);
        double failed;
        double retried;
        try {
            // Two JVM-resident tools start first: a generous bound.
            long deadline = System.nanoTime() + 60 * SECOND;
            while (consumed(consumer) < BEFORE) {
                Check.check(System.nanoTime() < deadline, consumed(consumer) + " of " + BEFORE + " lines consumed before the kill");
                step(feed, topic, sent);
            }
            killLeader(topic);
            long killed = System.nanoTime();
            watch.start();
            int consumedAtChange = -1;
            while (consumedAtChange < 0 || consumed(consumer) < consumedAtChange + AFTER) {
                Check.check(System.nanoTime() < killed + 60 * SECOND, "60 s after the kill: new leader " + newLeader + ", "
                        + consumed(consumer) + " of " + sent.size() + " lines consumed");
                step(feed, topic, sent);
                if (consumedAtChange < 0 && newLeader.get() >= 0) consumedAtChange = consumed(consumer);
            }
            // Once every line is consumed and the producer's buffer is all
            // free again, each of its batches has completed: its failure
            // count is final, read before the tool closes its producer (and
            // so its metrics) at the end of its stdin.
            Check.waitFor(60_000, "the console consumer to print all " + sent.size() + " lines",
                    () -> consumed(consumer) >= sent.size());
            Check.waitFor(30_000, "the console producer's buffer to be free again (nothing in flight)",
                    () -> metric(clientId, "buffer-available-bytes") == metric(clientId, "buffer-total-bytes"));
            failed = metric(clientId, "record-error-total");
            retried = metric(clientId, "record-retry-total");
            feed.close();
            Tools.Result r = producer.await(90_000);
            Check.check(r != null, "console producer still running 90 s after its stdin ended");
            Check.checkEquals(0, r.status(), "console producer's exit status");
            Thread.sleep(500);  // anything the consumer prints now is a duplicate
        } finally {
            over.set(true);  // a kafka-topics under way is let finish
            feed.close();
            producer.interrupt(30_000);
            consumer.interrupt(20_000);
        }
        Check.check(failed == 0, "the console producer failed " + (long) failed + " records (record-error-total)");
        List<String> values = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        for (String line : Tools.lines(consumer.output())) {
            Check.check(line.startsWith("Offset:") && line.indexOf('\t') > 0, "console consumer printed " + line);
            offsets.add(Long.parseLong(line.substring("Offset:".length(), line.indexOf('\t'))));
            values.add(line.substring(line.indexOf('\t') + 1));
        }
        Check.check(values.equals(sent), "consumed " + values.size() + " lines, sent " + sent.size()
                + " (not the same sequence: lost, duplicated or reordered)");
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < sent.size(); i++) expected.add(i);
        Check.check(offsets.equals(expected), "consumed offsets are not 0.." + (sent.size() - 1));
        Check.checkEquals(Map.of(0, (long) sent.size()), d.offsets(topic, "-1"), "kafka-get-offsets latest");
        return sent.size() + " lines, leader " + old + " killed, " + newLeader + " took over: console producer exited 0, "
                + "record-error-total 0 (record-retry-total " + (long) retried + "); all consumed once, in order, at offsets 0.."
                + (sent.size() - 1);
    }

    /** One line on the console producer's stdin, then a pause of EVERY_MS. */
    private static void step(PipedOutputStream feed, String topic, List<String> sent) throws IOException, InterruptedException {
        String v = String.format("%s-%06d", topic, sent.size());
        feed.write((v + "\n").getBytes(StandardCharsets.UTF_8));
        feed.flush();
        sent.add(v);
        Thread.sleep(EVERY_MS);
    }

    private static int consumed(Tools.Background consumer) {
        return Tools.lines(consumer.output()).size();
    }

    /** The harness request: SIGKILL the partition's leader (ignored on one broker). */
    private static void killLeader(String topic) {
        synchronized (Tools.results) {
            Tools.results.println("{\"event\": \"kill_leader\", \"scenario\": \"leader_failover\", \"topic\": "
                    + CliDriver.json(topic) + ", \"partition\": 0}");
            Tools.results.flush();
        }
    }

    /** The console producer's producer-metrics value, NaN while it has none. */
    private static double metric(String clientId, String name) {
        try {
            Object v = ManagementFactory.getPlatformMBeanServer()
                    .getAttribute(new ObjectName("kafka.producer:type=producer-metrics,client-id=" + clientId), name);
            return ((Number) v).doubleValue();
        } catch (Exception e) {
            return Double.NaN;
        }
    }
}
