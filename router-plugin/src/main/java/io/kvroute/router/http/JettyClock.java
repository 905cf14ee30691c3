package io.kvroute.router.http;

import io.kvroute.router.dispatch.DispatchClock;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The dispatch core's clock: the router's one nanosecond clock (injected by the composition root)
 * and the upstream client's {@link Scheduler} (looked up per call: the client creates it when it starts).
 */
final class JettyClock implements DispatchClock {

    private final HttpClient client;
    private final java.util.function.LongSupplier nanoClock;

    JettyClock(HttpClient client, java.util.function.LongSupplier nanoClock) {
        this.client = client;
        this.nanoClock = nanoClock;
    }

    @Override
    public long nanoTime() {
        return nanoClock.getAsLong();
    }

    @Override
    public void schedule(Runnable task, long delayNanos) {
        client.getScheduler().schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }
}
