package io.kvroute.it.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Drill 6: a ~45 s soak with a mixed workload (chat, completions, generate, streaming or not,
 * plus malformed requests) while a random worker is restarted on its port every few seconds.
 * Ends with 0 lost requests, no request left active, and the router's thread count and retained
 * heap (after GC) steady between a warmed-up start and the end.
 */
class SoakTest {

    private static final long SOAK_MILLIS = 45_000;
    private static final int CLIENT_LOOPS = 8;

    /** Counts of how requests ended. "Lost" is anything that hung or ended without a clear answer. */
    private static final class Tally {
        final LongAdder sent = new LongAdder();
        final LongAdder ok = new LongAdder();
        final LongAdder clearErrors = new LongAdder();
        final LongAdder rejectedAsExpected = new LongAdder();
        final List<String> lost = java.util.Collections.synchronizedList(new ArrayList<>());
    }

    @Test
    void mixedWorkloadWithRandomWorkerRestarts_losesNothing_andKeepsThreadsAndHeapSteady() throws Exception {
        try (Fleet fleet = Fleet.start(3, List.of("--decode-ms-per-step", "3", "--prefill-ms-per-1k", "5"), List.of(),
                List.of("--health-check-interval-secs", "0.3", "--health-failure-threshold", "1",
                        "--health-success-threshold", "1", "--cb-timeout-secs", "1", "--retry-initial-backoff-ms", "20"));
                Client client = new Client(60)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> client.get(fleet.url("/readyz")).status() == 200);
            Tally warmup = new Tally();
            runWorkload(fleet, client, warmup, 4_000, new SplittableRandom(1));
            assertThat(warmup.lost).isEmpty();
            await().atMost(Duration.ofSeconds(10)).until(() -> fleet.router.router().activeRequests() == 0);
            int threadsAtStart = routerThreads();
            long heapAtStart = retainedHeapBytes();

            Tally tally = new Tally();
            AtomicBoolean soaking = new AtomicBoolean(true);
            AtomicInteger restarts = new AtomicInteger();
            Thread chaos = new Thread(() -> {
                SplittableRandom random = new SplittableRandom(99);
                try {
                    while (soaking.get()) {
                        Thread.sleep(3_000 + random.nextInt(3_000));
                        if (!soaking.get()) {
                            return;
                        }
                        int victim = random.nextInt(fleet.mocks.size());
                        fleet.killMock(victim);
                        Thread.sleep(300 + random.nextInt(1_000));
                        fleet.reviveMock(victim);
                        restarts.incrementAndGet();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "soak-chaos");
            chaos.start();
            runWorkload(fleet, client, tally, SOAK_MILLIS, new SplittableRandom(2));
            soaking.set(false);
            chaos.join(10_000);

            long answered = tally.ok.sum() + tally.clearErrors.sum() + tally.rejectedAsExpected.sum();
            System.out.printf("soak: sent=%d ok=%d clearErrors=%d rejected4xx=%d lost=%d restarts=%d%n", tally.sent.sum(),
                    tally.ok.sum(), tally.clearErrors.sum(), tally.rejectedAsExpected.sum(), tally.lost.size(), restarts.get());
            assertThat(tally.lost).as("lost requests").isEmpty();
            assertThat(answered).isEqualTo(tally.sent.sum());
            assertThat(restarts.get()).isGreaterThanOrEqualTo(4);
            assertThat(tally.ok.sum()).isGreaterThan(tally.sent.sum() / 2);

            await().atMost(Duration.ofSeconds(15)).until(() -> fleet.router.router().activeRequests() == 0
                    && fleet.routerInFlight() == 0);
            // idle pools shrink slowly; give them the chance a long-running router has
            int threadsAtEnd = routerThreads();
            long heapAtEnd = retainedHeapBytes();
            System.out.printf("soak: router threads %d -> %d, retained heap %d MiB -> %d MiB%n", threadsAtStart, threadsAtEnd,
                    heapAtStart >> 20, heapAtEnd >> 20);
            assertThat(threadsAtEnd).as("router threads, start %d", threadsAtStart).isLessThanOrEqualTo(threadsAtStart + 64);
            assertThat(heapAtEnd).as("retained heap after GC, start %d MiB", heapAtStart >> 20)
                    .isLessThan(heapAtStart + (96L << 20));
            assertThat(client.get(fleet.url("/readyz")).status()).isEqualTo(200);
        }
    }

    private static void runWorkload(Fleet fleet, Client client, Tally tally, long millis, SplittableRandom seed)
            throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        List<Thread> loops = new ArrayList<>();
        for (int t = 0; t < CLIENT_LOOPS; t++) {
            SplittableRandom random = seed.split();
            Thread loop = new Thread(() -> {
                while (System.nanoTime() < end) {
                    oneRequest(fleet, client, tally, random);
                }
            }, "soak-client-" + t);
            loop.start();
            loops.add(loop);
        }
        for (Thread loop : loops) {
            loop.join(millis + 120_000);
        }
    }

    private static void oneRequest(Fleet fleet, Client client, Tally tally, SplittableRandom random) {
        tally.sent.increment();
        int kind = random.nextInt(10);
        boolean stream = random.nextBoolean();
        int tokens = 1 + random.nextInt(40);
        String path;
        String body;
        switch (kind) {
            case 0, 1, 2, 3 -> {
                path = "/v1/chat/completions";
                body = Client.chat(stream, tokens);
            }
            case 4, 5 -> {
                path = "/v1/completions";
                body = "{\"prompt\":\"soak " + random.nextInt(1000) + "\",\"max_tokens\":" + tokens + ",\"stream\":" + stream + "}";
            }
            case 6, 7 -> {
                path = "/generate";
                body = "{\"text\":\"soak " + random.nextInt(1000) + "\",\"sampling_params\":{\"max_new_tokens\":" + tokens
                        + "},\"stream\":" + stream + "}";
            }
            default -> {
                path = "/v1/chat/completions";
                body = random.nextBoolean() ? "{\"messages\":[" : "{\"messages\":[],\"max_tokens\":-1}";
            }
        }
        boolean malformed = kind >= 8;
        try {
            Client.Reply reply = client.postJson(fleet.url(path), body);
            if (malformed) {
                if (reply.status() == 400 && reply.isOpenAiError()) {
                    tally.rejectedAsExpected.increment();
                } else {
                    tally.lost.add("malformed got " + reply.status() + " " + reply.body());
                }
            } else if (reply.status() == 200 && reply.failure() == null && complete(reply, stream)) {
                tally.ok.increment();
            } else if (reply.status() >= 500 && reply.isOpenAiError()) {
                tally.clearErrors.increment();
            } else if (reply.status() == 200 && stream && reply.body().contains("data: {\"error\"")) {
                tally.clearErrors.increment(); // a stream cut by a worker restart ends with an error event
            } else {
                tally.lost.add(path + " " + reply.status() + " failure=" + reply.failure() + " " + tail(reply.body()));
            }
        } catch (Exception e) {
            tally.lost.add(path + " " + e);
        }
    }

    private static boolean complete(Client.Reply reply, boolean stream) {
        if (stream) {
            return reply.body().endsWith("data: [DONE]\n\n") && !reply.body().contains("data: {\"error\"");
        }
        return reply.body().startsWith("{") && reply.body().endsWith("}") && !reply.body().contains("\"error\":{");
    }

    private static String tail(String text) {
        return text.length() <= 200 ? text : "..." + text.substring(text.length() - 200);
    }

    /** Threads the router owns: its server pool, its upstream client pool, its health checker. */
    private static int routerThreads() {
        int count = 0;
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.getName().startsWith("kvroute-")) {
                count++;
            }
        }
        return count;
    }

    private static long retainedHeapBytes() throws InterruptedException {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
            best = Math.min(best, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return best;
    }
}
