package io.kvroute.bench;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waits for something outside the harness to become ready (an nginx process listening, a router's
 * events going live): the condition is checked on a scheduler tick and the caller waits on the
 * outcome, bounded by a deadline, instead of a sleep loop. A condition that throws ends the wait
 * with that exception (e.g. the process died).
 */
public final class Readiness {
    private Readiness() {}

    /**
     * @return true once {@code condition} held, false when {@code max} passed first
     * @throws Exception what {@code condition} threw
     */
    public static boolean await(Callable<Boolean> condition, Duration max, Duration checkEvery) throws Exception {
        ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-readiness");
            t.setDaemon(true);
            return t;
        });
        CompletableFuture<Boolean> ready = new CompletableFuture<>();
        try {
            ticks.scheduleWithFixedDelay(() -> {
                try {
                    if (condition.call()) {
                        ready.complete(true);
                    }
                } catch (Exception e) {
                    ready.completeExceptionally(e);
                }
            }, 0, checkEvery.toMillis(), TimeUnit.MILLISECONDS);
            return ready.get(max.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } finally {
            ticks.shutdownNow();
        }
    }
}
