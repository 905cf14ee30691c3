package io.kvroute.router.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.router.config.ServiceDiscoveryConfig;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import io.kvroute.router.worker.WorkerRole;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The informer adapter against fabric8's CRUD-mode mock API server: real list + watch over
 * WebSocket, resource versions, and a TCP relay the test cuts to drop the watch.
 */
class KubernetesDiscoveryTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Map<String, String> REGULAR = Map.of("app", "llm");
    private static final ServiceDiscoveryConfig CONFIG = new ServiceDiscoveryConfig(true, REGULAR,
            Map.of("app", "llm", "role", "prefill"), Map.of("app", "llm", "role", "decode"), "test", 8000,
            "sglang.ai/bootstrap-port");

    private MockApiServer api;
    private final WorkerRegistry registry = new WorkerRegistry();
    private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private KubernetesDiscovery discovery;

    @BeforeEach
    void start() throws Exception {
        api = new MockApiServer();
    }

    @AfterEach
    void stop() throws Exception {
        if (discovery != null) {
            discovery.close();
        }
        api.close();
    }

    private void startDiscovery() {
        discovery = new KubernetesDiscovery(api.routerClient, CONFIG, registry,
                id -> inFlight.computeIfAbsent(id, k -> new AtomicInteger()).get(), () -> { }, 30_000_000_000L,
                System::nanoTime, meters, 100);
        discovery.start();
    }

    private static String url(String ip) {
        return "http://" + ip + ":8000";
    }

    private Worker awaitWorker(String ip) {
        await().atMost(WAIT).until(() -> registry.get(Worker.idFor(url(ip))).isPresent());
        return registry.get(Worker.idFor(url(ip))).orElseThrow();
    }

    @Test
    void readyPod_becomesWorker_notReadyDrains_readyAgainResumes_deletedIsRemoved() {
        startDiscovery();
        api.putPod("test", "w1", "10.0.0.1", false, REGULAR, Map.of());
        api.putPod("test", "w2", "10.0.0.2", true, REGULAR, Map.of());
        Worker w2 = awaitWorker("10.0.0.2");
        assertThat(registry.get(Worker.idFor(url("10.0.0.1")))).as("NotReady pod is no worker").isEmpty();

        inFlight.computeIfAbsent(w2.id(), k -> new AtomicInteger()).set(1); // a request is running on w2
        api.putPod("test", "w2", "10.0.0.2", false, REGULAR, Map.of());
        await().atMost(WAIT).until(() -> registry.fleet().isDraining(w2.id()));
        api.putPod("test", "w2", "10.0.0.2", true, REGULAR, Map.of());
        await().atMost(WAIT).until(() -> registry.fleet().routable().stream().anyMatch(w -> w.id().equals(w2.id())));

        api.deletePod("test", "w2");
        await().atMost(WAIT).until(() -> registry.fleet().isDraining(w2.id()));
        assertThat(registry.get(w2.id())).as("kept while its request runs").isPresent();
        inFlight.get(w2.id()).set(0);
        await().atMost(WAIT).until(() -> registry.fleet().workers().isEmpty());
    }

    @Test
    void labelChanges_moveAPodBetweenRoles_andAnnotationChangesUpdateTheBootstrapPort() {
        startDiscovery();
        api.putPod("test", "w1", "10.0.0.1", true, Map.of("app", "llm", "role", "decode"), Map.of());
        assertThat(awaitWorker("10.0.0.1").role()).isEqualTo(WorkerRole.DECODE);
        String id = Worker.idFor(url("10.0.0.1"));

        api.putPod("test", "w1", "10.0.0.1", true, Map.of("app", "llm", "role", "prefill"),
                Map.of("sglang.ai/bootstrap-port", "8998"));
        await().atMost(WAIT).until(() -> registry.get(id).map(w -> w.role() == WorkerRole.PREFILL
                && Integer.valueOf(8998).equals(w.bootstrapPort())).orElse(false));

        api.putPod("test", "w1", "10.0.0.1", true, Map.of("app", "llm", "role", "prefill"),
                Map.of("sglang.ai/bootstrap-port", "9100"));
        await().atMost(WAIT).until(() -> registry.get(id).map(w -> Integer.valueOf(9100).equals(w.bootstrapPort()))
                .orElse(false));

        api.putPod("test", "w1", "10.0.0.1", true, Map.of("app", "other"), Map.of());
        await().atMost(WAIT).until(() -> registry.fleet().workers().isEmpty());
    }

    /**
     * A joined pod's KV-event annotation edited on the API server (pod Ready, same URL): the worker
     * takes the new endpoints, falls back to the default template when the annotation goes, and stays
     * routable throughout, also while the value does not parse.
     */
    @Test
    void kvEventsAnnotationEditedAfterJoin_movesTheWorkersEndpoints_withoutDrainingIt() {
        discovery = new KubernetesDiscovery(api.routerClient, new DiscoveryRules(CONFIG,
                io.kvroute.router.worker.KvEventsTemplates.parse("endpoint=tcp://*:5557;block-size=16", java.util.List.of()),
                "kvroute.io/kv-events"), CONFIG, registry, id -> 0, () -> { }, 30_000_000_000L, System::nanoTime, meters, 100);
        discovery.start();
        api.putPod("test", "w1", "10.0.0.1", true, REGULAR, Map.of("kvroute.io/kv-events", "endpoint=tcp://*:6000;block-size=16"));
        String id = awaitWorker("10.0.0.1").id();
        java.util.List<WorkerRegistry.ChangeKind> changes = new java.util.concurrent.CopyOnWriteArrayList<>();
        registry.addListener(change -> changes.add(change.kind()));
        java.util.function.Function<String, Boolean> endpointIs = endpoint -> registry.get(id)
                .map(w -> w.kvEvents() != null && w.kvEvents().eventEndpoints(w.host()).equals(java.util.List.of(endpoint)))
                .orElse(false);
        await().atMost(WAIT).until(() -> endpointIs.apply("tcp://10.0.0.1:6000"));

        api.putPod("test", "w1", "10.0.0.1", true, REGULAR, Map.of("kvroute.io/kv-events", "endpoint=tcp://*:7000;block-size=16"));
        await().atMost(WAIT).until(() -> endpointIs.apply("tcp://10.0.0.1:7000"));
        api.putPod("test", "w1", "10.0.0.1", true, REGULAR, Map.of("kvroute.io/kv-events", "endpoint=nonsense"));
        await().atMost(WAIT).until(() -> registry.get(id).map(w -> w.kvEvents() == null).orElse(false));
        api.putPod("test", "w1", "10.0.0.1", true, REGULAR, Map.of());
        await().atMost(WAIT).until(() -> endpointIs.apply("tcp://10.0.0.1:5557"));
        assertThat(registry.fleet().routable()).extracting(Worker::id).containsExactly(id);
        assertThat(changes).as("updated in place, never drained or re-added").containsOnly(WorkerRegistry.ChangeKind.UPDATED);
    }

    /** No client given: fabric8's default resolution reads the kubeconfig (file, server, context namespace). */
    @Test
    void withoutAClient_defaultResolutionUsesTheKubeconfigAndItsContextNamespace(@TempDir Path dir) throws Exception {
        Path kubeconfig = dir.resolve("config");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: mock
                  cluster: {server: "%s"}
                users:
                - name: tester
                  user: {token: not-checked}
                contexts:
                - name: mock
                  context: {cluster: mock, user: tester, namespace: test}
                current-context: mock
                """.formatted(api.directUrl()));
        String previous = System.getProperty("kubeconfig");
        System.setProperty("kubeconfig", kubeconfig.toString());
        try {
            ServiceDiscoveryConfig noNamespace = new ServiceDiscoveryConfig(true, REGULAR, Map.of(), Map.of(), null, 8000,
                    "sglang.ai/bootstrap-port");
            discovery = KubernetesDiscovery.create(null, noNamespace, registry, id -> 0, () -> { }, 0, meters);
        } finally {
            if (previous == null) {
                System.clearProperty("kubeconfig");
            } else {
                System.setProperty("kubeconfig", previous);
            }
        }
        assertThat(discovery.namespace()).isEqualTo("test");
        discovery.start();
        api.putPod("test", "w1", "10.0.0.1", true, REGULAR, Map.of());
        awaitWorker("10.0.0.1");
    }

    @Test
    void namespaceFilter_ignoresMatchingPodsInOtherNamespaces() {
        startDiscovery();
        api.putPod("elsewhere", "w9", "10.0.0.9", true, REGULAR, Map.of());
        api.putPod("test", "w1", "10.0.0.1", true, REGULAR, Map.of());
        awaitWorker("10.0.0.1");
        api.putPod("test", "w2", "10.0.0.2", true, REGULAR, Map.of());
        awaitWorker("10.0.0.2"); // events after the other namespace's pod arrived: it would have come first
        assertThat(registry.fleet().all()).extracting(Worker::url)
                .containsExactlyInAnyOrder(url("10.0.0.1"), url("10.0.0.2"));
        assertThat(discovery.namespace()).isEqualTo("test");
    }

    @Test
    void twoHundredPodsChurning_endWithExactlyTheReadyOnesAndNoGhost() {
        startDiscovery();
        SplittableRandom random = new SplittableRandom(7);
        Map<String, Boolean> readyByPod = new HashMap<>();
        for (int i = 0; i < 200; i++) {
            boolean ready = random.nextBoolean();
            api.putPod("test", "p" + i, "10.1." + (i / 100) + "." + (i % 100), ready, REGULAR, Map.of());
            readyByPod.put("p" + i, ready);
        }
        for (int step = 0; step < 150; step++) {
            int i = random.nextInt(200);
            String name = "p" + i;
            String ip = "10.1." + (i / 100) + "." + (i % 100);
            if (random.nextInt(4) == 0 && readyByPod.containsKey(name)) {
                api.deletePod("test", name);
                readyByPod.remove(name);
            } else if (readyByPod.containsKey(name)) {
                boolean ready = random.nextBoolean();
                api.setReady("test", name, ready);
                readyByPod.put(name, ready);
            } else {
                boolean ready = random.nextBoolean();
                api.putPod("test", name, ip, ready, REGULAR, Map.of());
                readyByPod.put(name, ready);
            }
        }
        Set<String> expected = new HashSet<>();
        readyByPod.forEach((name, ready) -> {
            if (ready) {
                int i = Integer.parseInt(name.substring(1));
                expected.add(url("10.1." + (i / 100) + "." + (i % 100)));
            }
        });
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            assertThat(registry.fleet().all()).extracting(Worker::url).containsExactlyInAnyOrderElementsOf(expected);
            assertThat(registry.fleet().draining()).isEmpty();
        });
    }

    @Test
    void watchDrop_keepsTheLastFleet_ageGrows_thenReconnectsAndFollowsNewEvents() throws Exception {
        startDiscovery();
        api.putPod("test", "w1", "10.0.0.1", true, REGULAR, Map.of());
        awaitWorker("10.0.0.1");
        await().atMost(WAIT).until(discovery::watching);

        api.cut(true); // API server unreachable: the watch is reset and reconnects are refused
        await().atMost(WAIT).until(() -> !discovery.watching());
        await().atMost(WAIT).until(() -> meters.get("kvroute.discovery.last.sync.age").gauge().value() > 1.5);
        assertThat(registry.fleet().routable()).as("the last known fleet keeps serving").extracting(Worker::url)
                .containsExactly(url("10.0.0.1"));
        assertThat(meters.get("kvroute.discovery.watching").gauge().value()).isZero();

        api.restore();
        await().atMost(WAIT).until(discovery::watching);
        await().atMost(WAIT).until(() -> meters.get("kvroute.discovery.last.sync.age").gauge().value() < 1.5);
        api.putPod("test", "w2", "10.0.0.2", true, REGULAR, Map.of());
        api.deletePod("test", "w1");
        await().atMost(WAIT).until(() -> registry.fleet().all().stream().map(Worker::url).toList()
                .equals(java.util.List.of(url("10.0.0.2"))));
    }
}
