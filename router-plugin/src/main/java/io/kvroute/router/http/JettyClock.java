package io.kvroute.router.http;

import io.kvroute.router.dispatch.DispatchClock;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The dispatch core's clock on {@link System#nanoTime()} and the upstream client's {@link Scheduler}
 * (looked up per call: the client creates it when it starts).
 */
final class JettyClock implements DispatchClock {

    private final HttpClient client;

    JettyClock(HttpClient client) {
        this.client = client;
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public void schedule(Runnable task, long delayNanos) {
        client.getScheduler().schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }
}
