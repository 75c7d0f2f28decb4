import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.utils.Exit;

/**
 * Runs Kafka's command-line tools (their real main classes, with the
 * arguments bin/kafka-*.sh would pass) inside this JVM, so that one JVM start
 * serves every invocation. What a shell would give each process separately,
 * this gives each calling thread: its own stdout and stdin (System.out and
 * System.in route by thread), an exit status (Exit.exit throws instead of
 * ending the JVM) and a Ctrl-C (the tool's shutdown hook, run on demand).
 */
final class Tools {
    static final String TOPICS = "org.apache.kafka.tools.TopicCommand";                               // kafka-topics.sh
    static final String CONSOLE_PRODUCER = "org.apache.kafka.tools.ConsoleProducer";                  // kafka-console-producer.sh
    static final String CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer";         // kafka-console-consumer.sh
    static final String CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"; // kafka-consumer-groups.sh
    static final String CONFIGS = "kafka.admin.ConfigCommand";                                        // kafka-configs.sh
    static final String DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand";               // kafka-delete-records.sh
    static final String GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell";                        // kafka-get-offsets.sh
    static final String API_VERSIONS = "org.apache.kafka.tools.BrokerApiVersionsCommand";             // kafka-broker-api-versions.sh

    /** The driver's own stdout, where only the JSON result lines go. */
    static PrintStream results;

    private static final ThreadLocal<ByteArrayOutputStream> OUT = new ThreadLocal<>();
    private static final ThreadLocal<InputStream> IN = new ThreadLocal<>();
    private static final ThreadLocal<Integer> FIRST_EXIT = new ThreadLocal<>();
    private static final Map<Thread, Runnable> SHUTDOWN_HOOKS = new ConcurrentHashMap<>();

    /**
     * Exit.exit on a tool's thread. An Error, since tools catch Exception
     * around their work; some catch Throwable and exit again with another
     * status, so the first status counts, as it would for a real process.
     */
    static final class ExitCalled extends Error {
        final int status;

        ExitCalled(int status, String message) {
            // No stack trace: tools that catch it print it, and it says nothing.
            super("exit " + status + (message == null ? "" : ": " + message), null, false, false);
            this.status = status;
        }
    }

    /** What one invocation printed and its exit status. */
    record Result(int status, String out) {
        List<String> lines() {
            return Tools.lines(out);
        }
    }

    /** The non-blank lines of what a tool printed. */
    static List<String> lines(String text) {
        List<String> out = new ArrayList<>();
        for (String l : text.split("\n")) if (!l.isBlank()) out.add(l);
        return out;
    }

    static void install() {
        results = System.out;
        PrintStream log = System.err;
        System.setOut(new PrintStream(new OutputStream() {
            private OutputStream target() {
                ByteArrayOutputStream b = OUT.get();
                return b != null ? b : log;  // a thread no tool runs on: the log
            }

            @Override
            public void write(int b) {
                OutputStream t = target();
                synchronized (t) {
                    try {
                        t.write(b);
                    } catch (java.io.IOException e) {
                        throw new RuntimeException(e);
                    }
                }
            }

            @Override
            public void write(byte[] b, int off, int len) {
                OutputStream t = target();
                synchronized (t) {
                    try {
                        t.write(b, off, len);
                    } catch (java.io.IOException e) {
                        throw new RuntimeException(e);
                    }
                }
            }
        }, true, StandardCharsets.UTF_8));
        System.setIn(new InputStream() {
            private InputStream source() {
                InputStream in = IN.get();
                return in != null ? in : InputStream.nullInputStream();
            }

            @Override
            public int read() throws java.io.IOException {
                return source().read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws java.io.IOException {
                return source().read(b, off, len);
            }
        });
        Exit.setExitProcedure(Tools::exit);
        Exit.setHaltProcedure(Tools::exit);
        Exit.setShutdownHookAdder((name, hook) -> SHUTDOWN_HOOKS.put(Thread.currentThread(), hook));
    }

    /**
     * Loads and initialises the tools' classes on a background thread while
     * the first scenarios run: kafka-configs (Scala, Kafka's core) alone
     * took half a minute to initialise on a loaded machine.
     */
    static void preload() {
        Thread t = new Thread(() -> {
            for (String c : new String[] {CONFIGS, CONFIGS + "$", CONSUMER_GROUPS, DELETE_RECORDS, GET_OFFSETS}) {
                try {
                    Class.forName(c, true, Tools.class.getClassLoader());
                } catch (Throwable e) {
                    System.err.println("preloading " + c + ": " + e);
                }
            }
        }, "preload");
        t.setDaemon(true);
        t.setPriority(Thread.MIN_PRIORITY);
        t.start();
    }

    private static void exit(int status, String message) {
        if (FIRST_EXIT.get() == null) {
            FIRST_EXIT.set(status);
            // A real process would print nothing more after exiting.
            if (OUT.get() != null) OUT.set(new ByteArrayOutputStream());
        }
        throw new ExitCalled(status, message);
    }

    /** Runs a tool on this thread, like `tool args < stdin`, and returns what it printed. */
    static Result run(String mainClass, String stdin, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        return run(out, mainClass, text(stdin), args);
    }

    private static InputStream text(String stdin) {
        return new ByteArrayInputStream((stdin == null ? "" : stdin).getBytes(StandardCharsets.UTF_8));
    }

    private static Result run(ByteArrayOutputStream out, String mainClass, InputStream stdin, String... args) {
        String shortName = mainClass.substring(mainClass.lastIndexOf('.') + 1);
        System.err.println("$ " + shortName + " " + String.join(" ", args));
        OUT.set(out);
        IN.set(stdin);
        FIRST_EXIT.remove();
        long t0 = System.nanoTime();
        int status = 0;
        try {
            Class.forName(mainClass).getMethod("main", String[].class).invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            if (!(e.getCause() instanceof ExitCalled)) {
                e.getCause().printStackTrace();
                status = 1;
            }
        } catch (ReflectiveOperationException e) {
            throw new RuntimeException(e);
        } finally {
            if (FIRST_EXIT.get() != null) status = FIRST_EXIT.get();
            FIRST_EXIT.remove();
            // The process ends here, so the JVM would run the tool's shutdown
            // hook now: the console producer's closes (flushes) its producer.
            Runnable hook = SHUTDOWN_HOOKS.remove(Thread.currentThread());
            if (hook != null) hook.run();
            OUT.remove();
            IN.remove();
        }
        String text;
        synchronized (out) {
            text = out.toString(StandardCharsets.UTF_8);
        }
        String shown = text.length() > 3000 ? text.substring(0, 3000) + "..." : text;
        System.err.println("  -> exit " + status + String.format(" (%.1f s)", (System.nanoTime() - t0) / 1e9) + (shown.isEmpty() ? "" : "\n" + shown.replaceAll("(?m)^", "  | ")));
        return new Result(status, text);
    }

    /** Runs a tool and fails the scenario unless it exits 0. */
    static Result ok(String mainClass, String stdin, String... args) {
        Result r = run(mainClass, stdin, args);
        if (r.status() != 0) {
            String name = mainClass.substring(mainClass.lastIndexOf('.') + 1);
            throw new Check.Failure(name + " " + Arrays.toString(args) + " exited " + r.status() + ": " + Check.shorten(r.out()));
        }
        return r;
    }

    /**
     * A tool running on its own thread, like `tool args &` (a console
     * consumer), or like `feeder | tool args &` when given a stdin the
     * caller goes on writing to (a console producer fed line by line).
     */
    static final class Background {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final Thread thread;
        private volatile Result result;

        Background(String mainClass, String... args) {
            this(mainClass, text(null), args);
        }

        Background(String mainClass, InputStream stdin, String... args) {
            thread = new Thread(() -> result = run(out, mainClass, stdin, args), "tool");
            thread.setDaemon(true);
            thread.start();
        }

        /** What it has printed so far. */
        String output() {
            synchronized (out) {
                return out.toString(StandardCharsets.UTF_8);
            }
        }

        /** Waits for it to end by itself; its result, or null if still running after `millis`. */
        Result await(long millis) throws InterruptedException {
            thread.join(millis);
            return thread.isAlive() ? null : result;
        }

        /** Ctrl-C: runs the shutdown hook the tool registered, then waits for it to end. */
        Result interrupt(long millis) throws InterruptedException {
            long deadline = System.currentTimeMillis() + millis;
            Runnable hook;
            while ((hook = SHUTDOWN_HOOKS.get(thread)) == null && thread.isAlive() && System.currentTimeMillis() < deadline) {
                Thread.sleep(20);
            }
            if (hook != null) {
                Thread t = new Thread(hook, "ctrl-c");
                t.setDaemon(true);
                t.start();
            }
            return await(Math.max(1, deadline - System.currentTimeMillis()));
        }
    }
}
