package io.kvroute.bench;

/** Entry point of kvroute-bench.jar. */
public final class BenchMain {
    public static void main(String[] args) {
        System.err.println("no scenarios yet");
        System.exit(2);
    }
}
