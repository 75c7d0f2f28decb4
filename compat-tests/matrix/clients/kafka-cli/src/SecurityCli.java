import java.io.FileReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The security columns (run_matrix.py --security) with Kafka's tools, each
 * over one listener, configured as a user would: a client.properties file
 * (the column's "client.*" keys in the flattened --security file, see
 * pylib/security_properties.py) given to kafka-topics and
 * kafka-consumer-groups as --command-config, to the console producer as
 * --producer.config and to the console consumer as --consumer.config.
 */
final class SecurityCli {
    private SecurityCli() {}

    static final int N = 40;

    static Map<String, CliDriver.Scenario> scenarios(Path flattened) throws IOException {
        Properties flat = new Properties();
        try (FileReader r = new FileReader(flattened.toFile())) {
            flat.load(r);
        }
        Map<String, CliDriver.Scenario> out = new LinkedHashMap<>();
        for (String id : flat.getProperty("columns").split(",")) {
            Properties client = new Properties();
            client.setProperty("request.timeout.ms", "30000");  // the tools' 5 s default is short on a loaded machine
            String prefix = id + ".client.";
            for (String k : flat.stringPropertyNames()) {
                if (k.startsWith(prefix)) client.setProperty(k.substring(prefix.length()), flat.getProperty(k));
            }
            Path config = flattened.resolveSibling("kafka-cli-" + id + ".properties");
            try (var w = Files.newBufferedWriter(config)) {
                client.store(w, "kafka-cli driver: " + id);
            }
            String bootstrap = flat.getProperty(id + ".bootstrap");
            String what = flat.getProperty(id + ".listener") + " (" + flat.getProperty(id + ".security_protocol") + ")";
            out.put(id, () -> roundTrip(new CliDriver(bootstrap, config.toString()), id, what));
        }
        return out;
    }

    /**
     * kafka-topics creates a topic (2 partitions) and lists it; the console
     * producer writes N keyed lines with acks=all; the console consumer in a
     * group reads them all and commits as it closes; kafka-consumer-groups
     * lists the group and describes its committed offsets: each partition's
     * log end, N in all.
     */
    static String roundTrip(CliDriver d, String id, String what) throws Exception {
        String topic = d.name(id.replace('_', '-'));
        String group = d.name(id.replace('_', '-') + "-group");
        d.createTopic(topic, 2);
        d.waitForLeaders(topic, 2);
        Check.check(d.listTopics().contains(topic), "topic not in kafka-topics --list");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < N; i++) lines.add("k" + i + "\tv" + i);  // keys spread the lines over both partitions
        d.produce(topic, lines, "--property", "parse.key=true", "--request-required-acks", "all");
        List<String> got = new ArrayList<>(d.consume(topic, N, "--group", group, "--from-beginning",
                "--property", "print.key=true"));
        List<String> want = new ArrayList<>(lines);
        Collections.sort(got);
        Collections.sort(want);
        Check.checkEquals(want, got, "lines consumed by the group");
        Check.check(Tools.ok(Tools.CONSUMER_GROUPS, null, d.admin("--bootstrap-server", d.b, "--list")).lines().contains(group),
                "group " + group + " not in kafka-consumer-groups --list");
        Map<Integer, String> committed = d.committed(group, topic);
        Map<Integer, Long> end = d.offsets(topic, "-1");
        long total = 0;
        for (Map.Entry<Integer, Long> e : end.entrySet()) {
            Check.checkEquals(String.valueOf(e.getValue()), committed.get(e.getKey()), "committed offset of partition " + e.getKey());
            total += e.getValue();
        }
        Check.checkEquals((long) N, total, "log end offsets " + end);
        return what + ": kafka-topics, console producer (acks=all) and consumer (group), kafka-consumer-groups: "
                + N + " lines, committed " + committed;
    }
}
