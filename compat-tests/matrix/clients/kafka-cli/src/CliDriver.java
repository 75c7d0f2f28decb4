import static java.lang.String.valueOf;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The compatibility matrix's scenarios expressed with Kafka's own
 * command-line tools, as a user would type them (see Tools for how they run
 * in one JVM). One JSON line per scenario on stdout.
 */
public final class CliDriver {
    interface Scenario {
        String run() throws Exception;
    }

    final String b;  // --bootstrap-server
    /** A security column's client.properties (--command-config, --producer.config, --consumer.config), else null. */
    final String clientConfig;
    private final String runId = UUID.randomUUID().toString().substring(0, 8);
    /** Node id -> host:port of every broker the harness started ($MATRIX_BROKERS; else node 1 at --bootstrap). */
    final Map<Integer, String> brokers = new java.util.TreeMap<>();

    CliDriver(String bootstrap, String clientConfig) {
        this.b = bootstrap;
        this.clientConfig = clientConfig;
        String spec = System.getenv("MATRIX_BROKERS");
        for (String entry : (spec == null || spec.isEmpty() ? "1@" + bootstrap.split(",")[0] : spec).split(",")) {
            int at = entry.indexOf('@');
            brokers.put(Integer.parseInt(entry.substring(0, at)), entry.substring(at + 1));
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        String security = null;  // the --security file, flattened to properties by the run script
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--bootstrap")) bootstrap = args[i + 1];
            if (args[i].equals("--security-properties")) security = args[i + 1];
        }
        if (bootstrap == null) {
            System.err.println("usage: CliDriver --bootstrap HOST:PORT [--security-properties FILE]");
            System.exit(2);
        }
        Tools.install();
        Tools.preload();
        Map<String, Scenario> scenarios = new LinkedHashMap<>();
        if (security != null) {
            scenarios = SecurityCli.scenarios(Path.of(security));  // only the security columns
        } else {
            addScenarios(scenarios, new CliDriver(bootstrap, null));
        }
        String only = System.getenv("MATRIX_ONLY");  // run_matrix.py --only (debugging)
        if (only != null && !only.isEmpty()) scenarios.keySet().retainAll(java.util.Set.of(only.split(",")));
        run(scenarios);
        // A console consumer a failed scenario left running must not keep the JVM.
        Runtime.getRuntime().halt(0);
    }

    private static void addScenarios(Map<String, Scenario> scenarios, CliDriver d) {
        scenarios.put("metadata", d::metadata);
        scenarios.put("create_delete_topics", d::createDeleteTopics);
        scenarios.put("produce_acks0", () -> d.acks("0"));
        scenarios.put("produce_acks1", () -> d.acks("1"));
        scenarios.put("produce_acksall", () -> d.acks("all"));
        scenarios.put("keys_headers_timestamps", d::keysHeadersTimestamps);
        for (String codec : new String[] {"gzip", "snappy", "lz4", "zstd"}) scenarios.put("compression_" + codec, () -> d.compression(codec));
        scenarios.put("idempotent_produce", d::idempotent);
        scenarios.put("transactions", () -> {
            // javap of kafka-tools 4.1.1: only ProducerPerformance and the
            // system tests' TransactionalMessageCopier (no bin/ script) call initTransactions.
            throw new Check.Unsupported("no bin/kafka-*.sh tool aborts a transaction it produced: kafka-console-producer "
                    + "never calls initTransactions (with --producer-property transactional.id kafka-clients refuses "
                    + "every send), kafka-producer-perf-test.sh --transactional-id only commits, every "
                    + "--transaction-duration-ms; kafka-transactions.sh abort ends another producer's hanging transaction");
        });
        scenarios.put("transactions_offsets", () -> {
            throw new Check.Unsupported("no bin/kafka-*.sh tool sends a group's offsets to a transaction: the console "
                    + "consumer commits them itself and no producer tool takes offsets (kafka-tools' "
                    + "TransactionalMessageCopier does, but Kafka ships no script for it: it is a system-test tool)");
        });
        scenarios.put("consume_earliest", d::earliest);
        scenarios.put("consume_latest", d::latest);
        scenarios.put("consume_timestamp", d::timestamp);
        scenarios.put("group_of_three", d::groupOfThree);
        scenarios.put("offsets_resume", d::offsetsResume);
        scenarios.put("admin_configs", d::configs);
        scenarios.put("admin_grow_partitions", d::growPartitions);
        scenarios.put("admin_groups", d::adminGroups);
        scenarios.put("admin_delete_records", d::deleteRecords);
        scenarios.put("leader_failover", () -> Failover.leaderFailover(d));
    }

    private static void run(Map<String, Scenario> scenarios) {
        for (Map.Entry<String, Scenario> e : scenarios.entrySet()) {
            String id = e.getKey();
            long t0 = System.nanoTime();
            System.err.println("== " + id);
            String status;
            String detail;
            try {
                detail = e.getValue().run();
                status = "pass";
            } catch (Check.Unsupported u) {
                status = "unsupported";
                detail = u.getMessage();
            } catch (Check.Failure f) {
                status = "fail";
                detail = f.getMessage();
            } catch (Throwable t) {
                t.printStackTrace();
                status = "fail";
                detail = t.toString();
            }
            System.err.printf("== %s: %s (%.1f s) %s%n", id, status, (System.nanoTime() - t0) / 1e9, detail);
            Tools.results.println("{\"scenario\": " + json(id) + ", \"status\": " + json(status) + ", \"detail\": " + json(detail) + "}");
            Tools.results.flush();
        }
    }

    static String json(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }

    // -- helpers: one tool invocation each -----------------------------------

    String name(String what) {
        return "cli-" + what + "-" + runId;
    }

    /** An admin tool's arguments, with --command-config for a security column. */
    String[] admin(String... args) {
        if (clientConfig == null) return args;
        String[] out = Arrays.copyOf(args, args.length + 2);
        out[args.length] = "--command-config";
        out[args.length + 1] = clientConfig;
        return out;
    }

    private static final Pattern PARTITION_LINE = Pattern.compile("Partition:\\s*(\\d+)\\s+Leader:\\s*(-?\\d+)");

    /** kafka-topics --describe: partition -> leader. */
    private Map<Integer, Integer> leaders(String topic) {
        Tools.Result r = Tools.run(Tools.TOPICS, null, admin("--bootstrap-server", b, "--describe", "--topic", topic));
        Map<Integer, Integer> out = new LinkedHashMap<>();
        if (r.status() != 0) return out;
        Matcher m = PARTITION_LINE.matcher(r.out());
        while (m.find()) out.put(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
        return out;
    }

    void waitForLeaders(String topic, int partitions) throws InterruptedException {
        Check.waitFor(30_000, partitions + " partitions of " + topic + " led by one of " + brokers.keySet(), () -> {
            Map<Integer, Integer> l = leaders(topic);
            return l.size() == partitions && l.values().stream().allMatch(brokers::containsKey);
        });
    }

    /**
     * kafka-topics --create. The tools that follow wait for the topic's
     * metadata themselves, as they would in a shell script.
     */
    void createTopic(String topic, int partitions) {
        Tools.ok(Tools.TOPICS, null, admin("--bootstrap-server", b, "--create", "--topic", topic,
                "--partitions", valueOf(partitions), "--replication-factor", valueOf(brokers.size())));
    }

    Set<String> listTopics() {
        return new HashSet<>(Tools.ok(Tools.TOPICS, null, admin("--bootstrap-server", b, "--list")).lines());
    }

    /** kafka-console-producer with one record per stdin line. */
    void produce(String topic, List<String> lines, String... extra) {
        List<String> args = new ArrayList<>(List.of("--bootstrap-server", b, "--topic", topic));
        if (clientConfig != null) args.addAll(List.of("--producer.config", clientConfig));
        args.addAll(Arrays.asList(extra));
        Tools.ok(Tools.CONSOLE_PRODUCER, String.join("\n", lines) + "\n", args.toArray(new String[0]));
    }

    /**
     * kafka-console-consumer until `max` messages (or 60 s without one: a
     * broker's first group creates __consumer_offsets); the printed lines.
     */
    List<String> consume(String topic, int max, String... extra) {
        List<String> args = new ArrayList<>(List.of("--bootstrap-server", b, "--topic", topic,
                "--max-messages", valueOf(max), "--timeout-ms", "60000"));
        if (clientConfig != null) args.addAll(List.of("--consumer.config", clientConfig));
        args.addAll(Arrays.asList(extra));
        return Tools.ok(Tools.CONSOLE_CONSUMER, null, args.toArray(new String[0])).lines();
    }

    /** kafka-get-offsets --time T: partition -> offset. */
    Map<Integer, Long> offsets(String topic, String time) {
        Map<Integer, Long> out = new LinkedHashMap<>();
        for (String line : Tools.ok(Tools.GET_OFFSETS, null, admin("--bootstrap-server", b, "--topic", topic, "--time", time)).lines()) {
            String[] f = line.split(":");
            if (f.length == 3 && f[0].equals(topic)) out.put(Integer.parseInt(f[1]), f[2].isEmpty() ? null : Long.parseLong(f[2]));
        }
        return out;
    }

    private static List<String> numbered(String prefix, int from, int to) {
        List<String> out = new ArrayList<>();
        for (int i = from; i < to; i++) out.add(prefix + i);
        return out;
    }

    // -- scenarios -------------------------------------------------------------

    String metadata() throws Exception {
        // The tool's own client gives up after 5 s by default, too short on a
        // loaded machine.
        Path config = Files.createTempFile("api-versions", ".properties");
        String versions;
        try {
            Files.writeString(config, "request.timeout.ms=30000\n");
            versions = Tools.ok(Tools.API_VERSIONS, null, "--bootstrap-server", b, "--command-config", config.toString()).out();
        } finally {
            Files.deleteIfExists(config);
        }
        Matcher m = Pattern.compile("^(\\S+):(\\d+) \\(id: (\\d+)", Pattern.MULTILINE).matcher(versions);
        Map<Integer, String> listed = new java.util.TreeMap<>();
        while (m.find()) listed.put(Integer.parseInt(m.group(3)), m.group(1) + ":" + m.group(2));
        Check.checkEquals(brokers, listed, "brokers listed by kafka-broker-api-versions (id -> address)");
        String topic = name("metadata");
        createTopic(topic, 2);
        waitForLeaders(topic, 2);
        String d = Tools.ok(Tools.TOPICS, null, "--bootstrap-server", b, "--describe", "--topic", topic).out();
        Check.check(d.contains("PartitionCount: 2"), "describe lacks PartitionCount: 2: " + Check.shorten(d));
        Map<Integer, Integer> led = leaders(topic);
        Check.checkEquals(Set.of(0, 1), led.keySet(), "partitions described");
        Check.check(brokers.keySet().containsAll(led.values()), "partition leaders " + led + " not all brokers");
        Check.check(listTopics().contains(topic), "topic not in kafka-topics --list");
        return "kafka-broker-api-versions: brokers " + listed + "; kafka-topics --describe: 2 partitions led by " + led.values();
    }

    String createDeleteTopics() throws Exception {
        String topic = name("create-delete");
        createTopic(topic, 3);
        waitForLeaders(topic, 3);
        Check.check(listTopics().contains(topic), "created topic not listed");
        Tools.ok(Tools.TOPICS, null, "--bootstrap-server", b, "--delete", "--topic", topic);
        Check.waitFor(30_000, "the topic to leave kafka-topics --list", () -> !listTopics().contains(topic));
        return "kafka-topics --create (3 partitions), --list, --describe, --delete; gone from --list";
    }

    String acks(String acks) throws Exception {
        String topic = name("acks" + acks);
        createTopic(topic, 1);
        List<String> values = numbered("v", 0, 50);
        produce(topic, values, "--request-required-acks", acks);
        // Latest is the high watermark: in a cluster it moves once the
        // followers have fetched, after an acks=0 or acks=1 producer returns.
        Check.waitFor(30_000, "kafka-get-offsets latest to reach 50", () -> offsets(topic, "-1").equals(Map.of(0, 50L)));
        Check.checkEquals(Map.of(0, 50L), offsets(topic, "-1"), "kafka-get-offsets latest");
        Check.checkEquals(values, consume(topic, 50, "--from-beginning"), "values consumed");
        return "50 lines with --request-required-acks " + acks + ", end offset 50, consumed back in order";
    }

    String keysHeadersTimestamps() throws Exception {
        String topic = name("khts");
        createTopic(topic, 1);
        // headers <TAB> key <TAB> value; "~" stands for null (null.marker).
        List<String> lines = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String headers = i == 7 ? "~" : "h:a" + i + ",h:b" + i + ",nul:~";
            String key = i == 3 ? "~" : "k" + i;
            String value = i == 5 ? "~" : "v" + i;
            lines.add(headers + "\t" + key + "\t" + value);
            expected.add((i == 7 ? "NO_HEADERS" : "h:a" + i + ",h:b" + i + ",nul:NULL") + "\t" + (i == 3 ? "NULL" : "k" + i)
                    + "\t" + (i == 5 ? "NULL" : "v" + i));
        }
        long before = System.currentTimeMillis();
        produce(topic, lines, "--property", "parse.key=true", "--property", "parse.headers=true", "--property", "null.marker=~");
        long after = System.currentTimeMillis();
        List<String> got = consume(topic, 10, "--from-beginning", "--property", "print.key=true", "--property", "print.headers=true",
                "--property", "print.timestamp=true", "--property", "null.literal=NULL");
        Check.checkEquals(10, got.size(), "records consumed");
        List<String> rest = new ArrayList<>();
        for (String line : got) {
            int tab = line.indexOf('\t');
            Check.check(line.startsWith("CreateTime:") && tab > 0, "no CreateTime in " + line);
            long ts = Long.parseLong(line.substring("CreateTime:".length(), tab));
            Check.check(ts >= before - 1000 && ts <= after + 1000, "create timestamp " + ts + " outside the produce window");
            rest.add(line.substring(tab + 1));
        }
        Check.checkEquals(expected, rest, "headers, keys, values consumed");
        throw new Check.Unsupported("kafka-console-producer cannot set a record's timestamp (its reader parses only "
                + "headers, key, value); keys, repeated and null headers, null key/value checked: ok");
    }

    String compression(String codec) throws Exception {
        String topic = name("codec-" + codec);
        createTopic(topic, 1);
        List<String> values = new ArrayList<>();
        for (int i = 0; i < 300; i++) values.add("value-" + i + "-" + "compressible ".repeat(i % 20).strip());
        produce(topic, values, "--compression-codec", codec);
        Check.checkEquals(values, consume(topic, 300, "--from-beginning"), "values consumed");
        return "300 lines with --compression-codec " + codec + " consumed back exactly";
    }

    String idempotent() throws Exception {
        String topic = name("idempotent");
        createTopic(topic, 1);
        List<String> values = numbered("v", 0, 1000);
        produce(topic, values, "--request-required-acks", "all", "--producer-property", "enable.idempotence=true",
                "--producer-property", "max.in.flight.requests.per.connection=5", "--max-partition-memory-bytes", "1024");
        Check.checkEquals(Map.of(0, 1000L), offsets(topic, "-1"), "kafka-get-offsets latest");
        Check.checkEquals(values, consume(topic, 1000, "--from-beginning"), "values consumed");
        return "1000 lines, enable.idempotence=true, 1 KiB batches: end offset 1000, consumed once in order";
    }

    String earliest() throws Exception {
        String topic = name("earliest");
        createTopic(topic, 1);
        produce(topic, numbered("v", 0, 10));
        List<String> got = consume(topic, 10, "--group", name("g-earliest"), "--from-beginning", "--property", "print.offset=true");
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 10; i++) expected.add("Offset:" + i + "\tv" + i);
        Check.checkEquals(expected, got, "records consumed");
        return "a new group with --from-beginning (earliest) read offsets 0..9";
    }

    /** kafka-consumer-groups --describe: partition -> current (committed) offset, for the topic. */
    Map<Integer, String> committed(String group, String topic) {
        Map<Integer, String> out = new LinkedHashMap<>();
        Tools.Result r = Tools.run(Tools.CONSUMER_GROUPS, null, admin("--bootstrap-server", b, "--describe", "--group", group));
        for (String line : r.lines()) {
            String[] f = line.trim().split("\\s+");
            // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID
            if (f.length >= 4 && f[0].equals(group) && f[1].equals(topic)) out.put(Integer.parseInt(f[2]), f[3]);
        }
        return out;
    }

    String latest() throws Exception {
        String topic = name("latest");
        String group = name("g-latest");
        createTopic(topic, 1);
        produce(topic, numbered("old", 0, 5));
        // Without --from-beginning a new group starts at the end.
        Tools.Background consumer = new Tools.Background(Tools.CONSOLE_CONSUMER, "--bootstrap-server", b, "--topic", topic,
                "--group", group, "--max-messages", "5", "--timeout-ms", "30000",
                "--consumer-property", "auto.commit.interval.ms=200");
        try {
            // Its auto-commit of position 5 shows it is positioned.
            Check.waitFor(30_000, "the console consumer's commit at offset 5", () -> "5".equals(committed(group, topic).get(0)));
            produce(topic, numbered("new", 0, 5));
            Tools.Result r = consumer.await(30_000);
            Check.check(r != null, "console consumer still running after 30 s; printed: " + Check.shorten(consumer.output()));
            Check.checkEquals(numbered("new", 0, 5), r.lines(), "values consumed");
        } finally {
            consumer.interrupt(10_000);
        }
        return "console consumer without --from-beginning committed 5 (the end), then read only the 5 new lines";
    }

    String timestamp() throws Exception {
        String topic = name("timestamp");
        createTopic(topic, 1);
        produce(topic, numbered("before", 0, 5));
        Thread.sleep(50);
        long t = System.currentTimeMillis();
        Thread.sleep(50);
        produce(topic, numbered("after", 0, 5));
        Check.checkEquals(Map.of(0, 5L), offsets(topic, valueOf(t)), "kafka-get-offsets --time " + t);
        List<String> got = consume(topic, 5, "--partition", "0", "--offset", "5");
        Check.checkEquals(numbered("after", 0, 5), got, "values consumed from offset 5");
        return "kafka-get-offsets --time <between the batches> = 5; console consumer --offset 5 read the second batch";
    }

    private static final Pattern ASSIGNMENT = Pattern.compile("\\d+(?:,\\d+)*");

    /** kafka-consumer-groups --describe --members --verbose: each member's partitions of the topic. */
    private List<Set<Integer>> memberAssignments(String group, String topic) {
        List<Set<Integer>> out = new ArrayList<>();
        Tools.Result r = Tools.run(Tools.CONSUMER_GROUPS, null, "--bootstrap-server", b, "--describe", "--group", group,
                "--members", "--verbose");
        for (String line : r.lines()) {
            if (!line.startsWith(group + " ")) continue;
            Set<Integer> parts = new HashSet<>();
            // ... CURRENT-ASSIGNMENT as topic:0,1 ...
            int at = line.indexOf(" " + topic + ":");
            if (at >= 0) {
                Matcher m = ASSIGNMENT.matcher(line.substring(at + topic.length() + 2));
                if (m.lookingAt()) for (String p : m.group().split(",")) parts.add(Integer.parseInt(p));
            }
            out.add(parts);
        }
        return out;
    }

    private static boolean covers(List<Set<Integer>> members, int count, int partitions) {
        if (members.size() != count) return false;
        Set<Integer> union = new HashSet<>();
        int total = 0;
        for (Set<Integer> m : members) {
            if (m.isEmpty()) return false;
            total += m.size();
            union.addAll(m);
        }
        return total == partitions && union.size() == partitions;
    }

    String groupOfThree() throws Exception {
        String topic = name("three");
        String group = name("g-three");
        createTopic(topic, 6);
        List<String> first = new ArrayList<>();
        for (int i = 0; i < 30; i++) first.add("k" + i + "\tfirst" + i);  // keys spread the lines over partitions
        produce(topic, first, "--property", "parse.key=true");
        List<Tools.Background> members = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                members.add(new Tools.Background(Tools.CONSOLE_CONSUMER, "--bootstrap-server", b, "--topic", topic,
                        "--group", group, "--from-beginning", "--timeout-ms", "60000",
                        "--consumer-property", "heartbeat.interval.ms=500", "--consumer-property", "auto.commit.interval.ms=200",
                        "--consumer-property", "client.id=member-" + i));
            }
            final List<Set<Integer>>[] seenThree = new List[1];
            Check.waitFor(60_000, "three members sharing the 6 partitions (kafka-consumer-groups --members)", () -> {
                seenThree[0] = memberAssignments(group, topic);
                return covers(seenThree[0], 3, 6);
            });
            Check.waitFor(30_000, "commits of every partition's end (kafka-consumer-groups --describe)", () -> {
                Map<Integer, String> c = committed(group, topic);
                Map<Integer, Long> end = offsets(topic, "-1");
                if (c.size() != 6) return false;
                for (Map.Entry<Integer, Long> e : end.entrySet()) if (!valueOf(e.getValue()).equals(c.get(e.getKey()))) return false;
                return true;
            });
            Tools.Background leaving = members.remove(2);
            Check.check(leaving.interrupt(20_000) != null, "the third console consumer did not stop on Ctrl-C");
            Check.waitFor(60_000, "two members taking over the 6 partitions", () -> covers(memberAssignments(group, topic), 2, 6));
            List<String> second = new ArrayList<>();
            for (int i = 0; i < 30; i++) second.add("k" + i + "\tsecond" + i);
            produce(topic, second, "--property", "parse.key=true");
            List<Tools.Background> all = new ArrayList<>(members);
            all.add(leaving);
            Check.waitFor(30_000, "all 60 lines consumed", () -> {
                int n = 0;
                for (Tools.Background m : all) n += m.output().split("\n").length;
                return n >= 60;
            });
            List<String> got = new ArrayList<>();
            for (Tools.Background m : all) for (String l : m.output().split("\n")) if (!l.isBlank()) got.add(l);
            Set<String> distinct = new HashSet<>(got);
            for (int i = 0; i < 30; i++) {
                Check.check(distinct.contains("first" + i), "first" + i + " not consumed");
                Check.check(distinct.contains("second" + i), "second" + i + " not consumed");
            }
            return "3 console consumers: " + sizes(seenThree[0]) + " of 6, commits at the end; after Ctrl-C on one, "
                    + "2 members cover 6; 60/60 lines, " + (got.size() - distinct.size()) + " duplicates";
        } finally {
            for (Tools.Background m : members) m.interrupt(20_000);
        }
    }

    private static String sizes(List<Set<Integer>> members) {
        List<String> s = new ArrayList<>();
        for (Set<Integer> m : members) s.add(valueOf(m.size()));
        return String.join("+", s);
    }

    String offsetsResume() throws Exception {
        String topic = name("resume");
        String group = name("g-resume");
        createTopic(topic, 1);
        produce(topic, numbered("v", 0, 10));
        Check.checkEquals(numbered("v", 0, 4), consume(topic, 4, "--group", group, "--from-beginning"), "first consumer's lines");
        Check.checkEquals(Map.of(0, "4"), committed(group, topic), "committed offsets after the first consumer");
        // No --from-beginning: without the commit this would start at the end.
        Check.checkEquals(numbered("v", 4, 10), consume(topic, 6, "--group", group), "second consumer's lines");
        Check.checkEquals(Map.of(0, "10"), committed(group, topic), "committed offsets after the second consumer");
        return "console consumer --max-messages 4 committed 4 on exit; the next one in the group resumed at v4";
    }

    /** kafka-configs --describe [--all] of a topic: name -> value. */
    private Map<String, String> topicConfigs(String topic, boolean all) {
        List<String> args = new ArrayList<>(List.of("--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic, "--describe"));
        if (all) args.add("--all");
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Tools.ok(Tools.CONFIGS, null, args.toArray(new String[0])).lines()) {
            Matcher m = Pattern.compile("^\\s+([a-z0-9.]+)=(\\S*) ").matcher(line);
            if (m.find()) out.put(m.group(1), m.group(2));
        }
        return out;
    }

    String configs() throws Exception {
        String topic = name("configs");
        createTopic(topic, 1);
        waitForLeaders(topic, 1);  // kafka-configs fails on a topic not yet in metadata
        Map<String, String> all = topicConfigs(topic, true);
        Check.checkEquals("604800000", all.get("retention.ms"), "retention.ms (--describe --all)");
        Check.checkEquals("delete", all.get("cleanup.policy"), "cleanup.policy (--describe --all)");
        Check.checkEquals(Map.of(), topicConfigs(topic, false), "dynamic configs of a new topic");
        Tools.ok(Tools.CONFIGS, null, "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic,
                "--alter", "--add-config", "retention.ms=3600000");
        Check.waitFor(30_000, "retention.ms=3600000", () -> "3600000".equals(topicConfigs(topic, false).get("retention.ms")));
        Tools.ok(Tools.CONFIGS, null, "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic,
                "--alter", "--delete-config", "retention.ms");
        Check.waitFor(30_000, "retention.ms back to its default", () -> topicConfigs(topic, false).isEmpty()
                && "604800000".equals(topicConfigs(topic, true).get("retention.ms")));
        return "kafka-configs --describe --all: retention.ms=604800000; --add-config retention.ms=3600000 shown; "
                + "--delete-config: default again";
    }

    String growPartitions() throws Exception {
        String topic = name("grow");
        createTopic(topic, 1);
        waitForLeaders(topic, 1);
        Tools.ok(Tools.TOPICS, null, "--bootstrap-server", b, "--alter", "--topic", topic, "--partitions", "3");
        waitForLeaders(topic, 3);
        String d = Tools.ok(Tools.TOPICS, null, "--bootstrap-server", b, "--describe", "--topic", topic).out();
        Check.check(d.contains("PartitionCount: 3"), "describe lacks PartitionCount: 3: " + Check.shorten(d));
        return "kafka-topics --alter --partitions 3: --describe shows 3 partitions led by 1";
    }

    String adminGroups() throws Exception {
        String topic = name("groups");
        String group = name("g-admin");
        createTopic(topic, 1);
        Tools.Background consumer = new Tools.Background(Tools.CONSOLE_CONSUMER, "--bootstrap-server", b, "--topic", topic,
                "--group", group, "--timeout-ms", "60000", "--consumer-property", "client.id=described-member");
        try {
            Check.waitFor(30_000, "the console consumer to hold partition 0",
                    () -> memberAssignments(group, topic).equals(List.of(Set.of(0))));
            Check.check(Tools.ok(Tools.CONSUMER_GROUPS, null, "--bootstrap-server", b, "--list").lines().contains(group),
                    "group not in kafka-consumer-groups --list");
            String state = Tools.ok(Tools.CONSUMER_GROUPS, null, "--bootstrap-server", b, "--describe", "--group", group, "--state").out();
            Check.check(Pattern.compile("(?m)^" + Pattern.quote(group) + "\\s+.*\\s(range|cooperative-sticky)\\s+Stable\\s+1\\s*$")
                    .matcher(state).find(), "--state does not show Stable with 1 member: " + Check.shorten(state));
            String members = Tools.ok(Tools.CONSUMER_GROUPS, null, "--bootstrap-server", b, "--describe", "--group", group,
                    "--members").out();
            Check.check(members.contains("described-member"), "--members lacks the client id: " + Check.shorten(members));
            Check.check(consumer.interrupt(20_000) != null, "console consumer did not stop on Ctrl-C");
            Check.waitFor(30_000, "the group to be Empty after its member left", () -> {
                String s = Tools.run(Tools.CONSUMER_GROUPS, null, "--bootstrap-server", b, "--describe", "--group", group, "--state").out();
                return Pattern.compile("(?m)^" + Pattern.quote(group) + "\\s+.*\\sEmpty\\s+0\\s*$").matcher(s).find();
            });
        } finally {
            consumer.interrupt(20_000);
        }
        return "--list shows the group; --describe --state: Stable, 1 member; --members: its client id; Empty after Ctrl-C";
    }

    String deleteRecords() throws Exception {
        String topic = name("delete-records");
        createTopic(topic, 1);
        produce(topic, numbered("v", 0, 10));
        Path json = Files.createTempFile("delete-records", ".json");
        try {
            Files.writeString(json, "{\"partitions\": [{\"topic\": \"" + topic + "\", \"partition\": 0, \"offset\": 4}], \"version\": 1}");
            String out = Tools.ok(Tools.DELETE_RECORDS, null, "--bootstrap-server", b, "--offset-json-file", json.toString()).out();
            Check.check(out.contains("low_watermark: 4"), "kafka-delete-records did not report low_watermark: 4: " + Check.shorten(out));
        } finally {
            Files.deleteIfExists(json);
        }
        Check.checkEquals(Map.of(0, 4L), offsets(topic, "-2"), "kafka-get-offsets earliest");
        List<String> got = consume(topic, 6, "--from-beginning", "--property", "print.offset=true");
        List<String> expected = new ArrayList<>();
        for (int i = 4; i < 10; i++) expected.add("Offset:" + i + "\tv" + i);
        Check.checkEquals(expected, got, "records consumed from the beginning");
        return "kafka-delete-records before 4: low_watermark 4; kafka-get-offsets earliest 4; consumer starts at offset 4";
    }
}
