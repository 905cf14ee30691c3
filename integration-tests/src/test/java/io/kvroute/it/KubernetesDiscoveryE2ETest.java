package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.discovery.DiscoveryRules;
import io.kvroute.router.discovery.MockApiServer;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;

/**
 * Kubernetes discovery end to end: three in-process mock GPU workers are published as pods on
 * fabric8's CRUD mock API server (pod IP 127.0.0.1, each worker's port in the
 * {@code kvroute.io/worker-port} annotation); the router finds them through its informer and serves
 * traffic. Deleting one pod under load drains its worker: in-flight requests finish, new ones go
 * elsewhere, and the worker process is stopped hard the moment the router removes it, so a
 * request still routed there would fail. Retries are off, so no failure can hide.
 */
class KubernetesDiscoveryE2ETest {

    private static final String CHAT = "{\"model\":\"mock-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}],"
            + "\"max_tokens\":8}";

    @Test
    void podDeletionUnderTraffic_drainsItsWorkerWithNoFailedRequest() throws Exception {
        List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
        ExecutorService clients = Executors.newFixedThreadPool(4);
        try (MockApiServer api = new MockApiServer(); Http http = new Http()) {
            for (int i = 0; i < 3; i++) {
                MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "20");
                workers.add(worker);
                int port = java.net.URI.create(worker.baseUrl()).getPort();
                api.putPod("llm", "worker-" + i, "127.0.0.1", true, Map.of("app", "mock-worker"),
                        Map.of(DiscoveryRules.WORKER_PORT_ANNOTATION, Integer.toString(port)));
            }
            try (RouterMain.RunningRouter router = RouterMain.start(RouterOptions.parse("--port", "0",
                    "--service-discovery", "--selector", "app=mock-worker", "--service-discovery-namespace", "llm",
                    "--retry-max-attempts", "1", "--health-check-interval-secs", "1"), api.routerClient)) {
                WorkerRegistry registry = router.router().workers();
                assertThat(registry.awaitFleet(f -> f.routable().size() == 3, Duration.ofSeconds(30))).isTrue();
                MockWorkerMain.MockWorker doomed = workers.get(0);
                String doomedId = Worker.idFor(doomed.baseUrl());
                AtomicBoolean removed = new AtomicBoolean();
                registry.addListener(change -> {
                    if (change.kind() == WorkerRegistry.ChangeKind.REMOVED && change.worker().id().equals(doomedId)) {
                        removed.set(true);
                        doomed.close(); // the pod's process exits as soon as the router lets go of it
                    }
                });

                AtomicBoolean stop = new AtomicBoolean();
                Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
                List<Throwable> failures = new CopyOnWriteArrayList<>();
                AtomicInteger afterRemoval = new AtomicInteger();
                for (int c = 0; c < 4; c++) {
                    clients.execute(() -> {
                        while (!stop.get()) {
                            try {
                                boolean wasRemoved = removed.get();
                                ContentResponse reply = http.postJson(router.baseUrl() + "/v1/chat/completions", CHAT);
                                statuses.computeIfAbsent(reply.getStatus(), s -> new AtomicInteger()).incrementAndGet();
                                if (wasRemoved && reply.getStatus() == 200) {
                                    afterRemoval.incrementAndGet();
                                }
                            } catch (Exception e) {
                                failures.add(e);
                            }
                        }
                    });
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> doomed.handler().requests() >= 5);
                api.deletePod("llm", "worker-0");
                await().atMost(Duration.ofSeconds(30)).untilTrue(removed);
                await().atMost(Duration.ofSeconds(30)).until(() -> afterRemoval.get() >= 20);
                stop.set(true);
                clients.shutdown();
                assertThat(clients.awaitTermination(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

                assertThat(failures).as("transport failures").isEmpty();
                assertThat(statuses.keySet()).as("statuses seen: %s", statuses).containsExactly(200);
                assertThat(registry.fleet().all()).extracting(Worker::url)
                        .containsExactlyInAnyOrder(workers.get(1).baseUrl(), workers.get(2).baseUrl());
                assertThat(workers.get(1).handler().requests() + workers.get(2).handler().requests())
                        .as("the survivors took the traffic").isGreaterThan(20);
            }
        } finally {
            clients.shutdownNow();
            for (MockWorkerMain.MockWorker worker : workers) {
                try {
                    worker.close();
                } catch (RuntimeException alreadyStopped) {
                    // the doomed worker was stopped by the test
                }
            }
        }
    }
}
