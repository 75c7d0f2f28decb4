package runnel.matrix;

import java.io.FileReader;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs every scenario of the compatibility matrix with the Java client
 * (KafkaProducer, KafkaConsumer, Admin) against one broker and prints one
 * JSON line per scenario on stdout. The same code runs against Runnel and
 * Apache Kafka; it never asks which one it is talking to.
 */
public final class JavaClientDriver {
    /**
     * A scenario returns a short detail when it passes and throws otherwise.
     * The Java client expresses every scenario; one that needs a cluster
     * throws Kit.Unsupported against a single broker.
     */
    interface Scenario {
        String run(Kit kit) throws Exception;
    }

    // Each scenario bounds its own waits; this is the backstop for a wait
    // the client itself does not bound.
    private static final long SCENARIO_LIMIT_SECONDS = 90;

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        String security = null;  // the --security file, flattened to properties by the run script
        java.util.Set<String> only = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--bootstrap")) bootstrap = args[i + 1];
            if (args[i].equals("--security-properties")) security = args[i + 1];
            if (args[i].equals("--only")) only = java.util.Set.of(args[i + 1].split(","));  // debugging
        }
        if (bootstrap == null) {
            System.err.println("usage: JavaClientDriver --bootstrap HOST:PORT [--security-properties FILE]");
            System.exit(2);
        }

        Map<String, Scenario> scenarios = new LinkedHashMap<>();
        if (security != null) {
            // Only the security columns, each over its own listener.
            Properties flat = new Properties();
            try (FileReader r = new FileReader(security)) {
                flat.load(r);
            }
            for (Map.Entry<String, Map<String, String>> c : SecurityScenarios.columns(flat).entrySet()) {
                scenarios.put(c.getKey(), kit -> SecurityScenarios.roundTrip(c.getKey(), c.getValue()));
            }
            run(scenarios, null);
            System.exit(0);  // threads of a timed-out scenario may still hold clients open
        }
        scenarios.put("metadata", AdminScenarios::metadata);
        scenarios.put("create_delete_topics", AdminScenarios::createDeleteTopics);
        scenarios.put("produce_acks0", kit -> ProduceScenarios.acks(kit, "0"));
        scenarios.put("produce_acks1", kit -> ProduceScenarios.acks(kit, "1"));
        scenarios.put("produce_acksall", kit -> ProduceScenarios.acks(kit, "all"));
        scenarios.put("keys_headers_timestamps", ProduceScenarios::keysHeadersTimestamps);
        for (String codec : new String[] {"gzip", "snappy", "lz4", "zstd"}) {
            scenarios.put("compression_" + codec, kit -> ProduceScenarios.compression(kit, codec));
        }
        scenarios.put("idempotent_produce", ProduceScenarios::idempotent);
        scenarios.put("transactions", TxnScenarios::transactions);
        scenarios.put("transactions_offsets", TxnScenarios::transactionsOffsets);
        scenarios.put("consume_earliest", ConsumeScenarios::earliest);
        scenarios.put("consume_latest", ConsumeScenarios::latest);
        scenarios.put("consume_timestamp", ConsumeScenarios::timestamp);
        scenarios.put("group_of_three", GroupScenarios::groupOfThree);
        scenarios.put("offsets_resume", GroupScenarios::offsetsResume);
        scenarios.put("admin_configs", AdminScenarios::configs);
        scenarios.put("admin_grow_partitions", AdminScenarios::growPartitions);
        scenarios.put("admin_groups", GroupScenarios::adminGroups);
        scenarios.put("admin_delete_records", AdminScenarios::deleteRecords);
        scenarios.put("leader_failover", FailoverScenarios::leaderFailover);
        if (only != null) scenarios.keySet().retainAll(only);
        try (Kit kit = new Kit(bootstrap)) {
            run(scenarios, kit);
        }
        // Threads of a timed-out scenario may still hold clients open.
        System.exit(0);
    }

    /** Runs each scenario (with `kit`, null when a scenario makes its own) and prints its JSON line. */
    static void run(Map<String, Scenario> scenarios, Kit kit) throws InterruptedException {
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "scenario");
            t.setDaemon(true);
            return t;
        });
        for (Map.Entry<String, Scenario> e : scenarios.entrySet()) {
            String id = e.getKey();
            long t0 = System.nanoTime();
            System.err.println("== " + id);
            Future<String> f = pool.submit(() -> e.getValue().run(kit));
            String status;
            String detail;
            try {
                detail = f.get(SCENARIO_LIMIT_SECONDS, TimeUnit.SECONDS);
                status = "pass";
            } catch (TimeoutException te) {
                f.cancel(true);
                status = "fail";
                detail = "timed out after " + SCENARIO_LIMIT_SECONDS + " s";
            } catch (java.util.concurrent.ExecutionException ee) {
                status = ee.getCause() instanceof Kit.Unsupported ? "unsupported" : "fail";
                detail = Kit.describe(ee.getCause());
                ee.getCause().printStackTrace();
            }
            System.err.printf("== %s: %s (%.1f s) %s%n", id, status, (System.nanoTime() - t0) / 1e9, detail);
            synchronized (System.out) {
                System.out.println("{\"scenario\": " + json(id) + ", \"status\": " + json(status)
                        + ", \"detail\": " + json(detail) + "}");
                System.out.flush();
            }
        }
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : (s == null ? "" : s).toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
