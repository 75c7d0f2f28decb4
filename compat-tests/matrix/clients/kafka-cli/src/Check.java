import java.util.function.BooleanSupplier;

/** Scenario outcomes: a failed check, a scenario the tools cannot express, bounded waits. */
final class Check {
    private Check() {}

    static final class Failure extends RuntimeException {
        Failure(String message) {
            super(message);
        }
    }

    /** The tools cannot express the scenario; the message says why. */
    static final class Unsupported extends RuntimeException {
        Unsupported(String message) {
            super(message);
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new Failure(what);
    }

    static void checkEquals(Object expected, Object actual, String what) {
        if (expected == null ? actual != null : !expected.equals(actual)) {
            throw new Failure(what + ": expected " + shorten(String.valueOf(expected)) + ", got " + shorten(String.valueOf(actual)));
        }
    }

    static void waitFor(long millis, String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        while (!condition.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) throw new Failure("timed out after " + millis / 1000 + " s waiting for " + what);
            Thread.sleep(200);
        }
    }

    static String shorten(String s) {
        s = s.strip().replace('\n', ' ').replace('\t', ' ');
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
