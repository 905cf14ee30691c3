package io.kvroute.router.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.router.LoopbackServer;
import io.kvroute.router.config.HealthSettings;
import io.kvroute.router.config.SettingsBinder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The health checker builds no executor: its probe rounds run on the scheduler the composition root
 * hands it, and closing it stops the rounds without stopping that scheduler (its owner does).
 * A real Jetty worker on loopback answers the probes.
 */
class HealthCheckerSchedulerTest {

    private final AtomicInteger probes = new AtomicInteger();
    private final AtomicInteger scheduled = new AtomicInteger();
    /** The composition root's scheduler, counting what is scheduled on it. */
    private final ScheduledExecutorScheduler rootScheduler = new ScheduledExecutorScheduler("test-root", true) {
        @Override
        public Scheduler.Task schedule(Runnable task, long delay, TimeUnit unit) {
            scheduled.incrementAndGet();
            return super.schedule(task, delay, unit);
        }
    };
    private Server worker;
    private HttpClient client;

    @AfterEach
    void tearDown() throws Exception {
        client.stop();
        worker.stop();
        rootScheduler.stop();
    }

    @Test
    void probeRoundsRunOnTheGivenScheduler_andStopOnClose() throws Exception {
        worker = LoopbackServer.start(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                if (Request.getPathInContext(request).equals("/health")) {
                    probes.incrementAndGet();
                }
                response.setStatus(200);
                callback.succeeded();
                return true;
            }
        });
        client = new HttpClient();
        client.start();
        rootScheduler.start();
        WorkerRegistry registry = new WorkerRegistry();
        registry.add(Worker.regular(LoopbackServer.url(worker)));
        HealthSettings fast = SettingsBinder.parse(HealthSettings.class, "--health-check-interval-secs=0.05");

        HealthChecker health = new HealthChecker(registry, client, fast, null, null, rootScheduler);
        health.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> probes.get() >= 3);
        assertThat(scheduled.get()).as("every round is scheduled on the root's scheduler").isGreaterThanOrEqualTo(3);

        health.close();
        Thread.sleep(100); // a round already running may still schedule its successor, which close cancelled
        int afterClose = probes.get();
        Thread.sleep(300); // six intervals
        assertThat(probes.get()).as("no round after close").isEqualTo(afterClose);
        assertThat(rootScheduler.isRunning()).as("the owner's scheduler keeps running").isTrue();
    }
}
