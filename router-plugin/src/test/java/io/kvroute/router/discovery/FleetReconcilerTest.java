package io.kvroute.router.discovery;

import static io.kvroute.router.discovery.FleetReconcilerModelTest.CONFIG;
import static io.kvroute.router.discovery.FleetReconcilerModelTest.DRAIN_TIMEOUT_NANOS;
import static io.kvroute.router.discovery.FleetReconcilerModelTest.apply;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.worker.VllmHashSpec;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import io.kvroute.router.worker.WorkerRole;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FleetReconcilerTest {

    private final FleetReconciler reconciler = new FleetReconciler(new DiscoveryRules(CONFIG), DRAIN_TIMEOUT_NANOS);
    private final WorkerRegistry registry = new WorkerRegistry();
    private final Map<String, Integer> inFlight = new HashMap<>();

    static PodFacts ready(String name, String ip, Map<String, String> labels, Map<String, String> annotations) {
        return new PodFacts("ns/" + name, true, true, false, ip, labels, annotations);
    }

    private List<ReconcileAction> reconcile(long nowNanos) {
        List<ReconcileAction> actions = reconciler.plan(registry.fleet(), id -> inFlight.getOrDefault(id, 0), nowNanos);
        apply(actions, registry);
        return actions;
    }

    @Test
    void readyPod_becomesRegularWorkerOnTheDefaultPort() {
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of()));
        reconcile(0);
        assertThat(registry.fleet().routable()).extracting(Worker::url, Worker::role)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("http://10.1.0.7:8000", WorkerRole.REGULAR));
    }

    @Test
    void notReadyPod_isDrainedThenRemovedOnlyWhenItsInFlightWorkIsDone() {
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of()));
        reconcile(0);
        String id = Worker.idFor("http://10.1.0.7:8000");
        inFlight.put(id, 2);
        reconciler.upsert(new PodFacts("ns/a", true, false, false, "10.1.0.7", Map.of("app", "llm"), Map.of()));
        assertThat(reconcile(1)).containsExactly(new ReconcileAction.Drain(id));
        assertThat(registry.fleet().isDraining(id)).isTrue();
        assertThat(reconcile(2)).as("in-flight requests keep it registered").isEmpty();
        inFlight.put(id, 0);
        assertThat(reconcile(3)).containsExactly(new ReconcileAction.Remove(id));
        assertThat(registry.fleet().workers()).isEmpty();
    }

    @Test
    void drainDeadline_removesAWorkerWhoseRequestsNeverFinish() {
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of()));
        reconcile(0);
        String id = Worker.idFor("http://10.1.0.7:8000");
        inFlight.put(id, 1);
        reconciler.delete("ns/a");
        reconcile(10);
        assertThat(reconcile(10 + DRAIN_TIMEOUT_NANOS - 1)).isEmpty();
        assertThat(reconcile(10 + DRAIN_TIMEOUT_NANOS)).containsExactly(new ReconcileAction.Remove(id));
    }

    @Test
    void podReadyAgainWhileDraining_resumesTheSameWorker() {
        PodFacts pod = ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of());
        reconciler.upsert(pod);
        reconcile(0);
        String id = Worker.idFor("http://10.1.0.7:8000");
        inFlight.put(id, 1);
        reconciler.upsert(new PodFacts("ns/a", true, false, false, "10.1.0.7", Map.of("app", "llm"), Map.of()));
        reconcile(1);
        reconciler.upsert(pod);
        assertThat(reconcile(2)).containsExactly(new ReconcileAction.Resume(id));
        assertThat(registry.fleet().routable()).extracting(Worker::id).containsExactly(id);
    }

    @Test
    void labelChange_movesThePodBetweenRolesAndAnnotationSetsTheBootstrapPort() {
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm", "role", "decode"), Map.of()));
        reconcile(0);
        String id = Worker.idFor("http://10.1.0.7:8000");
        assertThat(registry.get(id).orElseThrow().role()).isEqualTo(WorkerRole.DECODE);
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm", "role", "prefill"),
                Map.of("sglang.ai/bootstrap-port", "8998")));
        assertThat(reconcile(1)).containsExactly(new ReconcileAction.Update(id, WorkerRole.PREFILL, 8998));
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm", "role", "prefill"),
                Map.of("sglang.ai/bootstrap-port", "9001")));
        reconcile(2);
        assertThat(registry.get(id).orElseThrow().bootstrapPort()).isEqualTo(9001);
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of("sglang.ai/bootstrap-port", "9001")));
        reconcile(3);
        assertThat(registry.get(id).orElseThrow()).extracting(Worker::role, Worker::bootstrapPort)
                .containsExactly(WorkerRole.REGULAR, null);
    }

    @Test
    void perPodPortAnnotation_overridesTheDefaultPortAndAMalformedOneExcludesThePod() {
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of("kvroute.io/worker-port", "31007")));
        reconciler.upsert(ready("b", "10.1.0.8", Map.of("app", "llm"), Map.of("kvroute.io/worker-port", "70000")));
        reconcile(0);
        assertThat(registry.fleet().all()).extracting(Worker::url).containsExactly("http://10.1.0.7:31007");
    }

    @Test
    void adminAddedWorker_noPodNames_isLeftAlone() {
        registry.add(Worker.regular("http://10.9.9.9:8000"));
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of()));
        reconcile(0);
        reconciler.delete("ns/a");
        reconcile(1);
        reconcile(2);
        assertThat(registry.fleet().all()).extracting(Worker::url).containsExactly("http://10.9.9.9:8000");
    }

    @Test
    void quickChurn_deleteAndRecreateOnTheSameIp_leavesOneRoutableWorker() {
        reconciler.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of()));
        reconcile(0);
        reconciler.delete("ns/a");
        reconcile(1); // drained
        reconciler.upsert(ready("a2", "10.1.0.7", Map.of("app", "llm"), Map.of()));
        reconcile(2); // the replacement pod reuses the IP: resumed, not removed
        reconcile(3);
        assertThat(registry.fleet().routable()).extracting(Worker::url).containsExactly("http://10.1.0.7:8000");
        reconciler.delete("ns/a2");
        reconcile(4);
        reconcile(5);
        assertThat(registry.fleet().all()).isEmpty();
    }

    @Test
    void ipv6PodIp_isBracketedInTheUrl() {
        reconciler.upsert(ready("a", "fd00::7", Map.of("app", "llm"), Map.of()));
        reconcile(0);
        assertThat(registry.fleet().all()).extracting(Worker::url).containsExactly("http://[fd00::7]:8000");
    }

    /**
     * A pod's kvroute.io/kv-events annotation gives its worker KV-event endpoints on the pod IP; a pod
     * without one gets the fleet's default template; a malformed one gets none (not the default).
     */
    @Test
    void kvEventsAnnotation_givesThePodsWorkerItsEndpoints_elseTheDefault_elseNoneWhenMalformed() {
        FleetReconciler withTemplates = new FleetReconciler(new DiscoveryRules(CONFIG,
                io.kvroute.router.worker.KvEventsTemplates.parse("endpoint=tcp://*:5557;block-size=16", List.of()),
                "kvroute.io/kv-events"), DRAIN_TIMEOUT_NANOS);
        withTemplates.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of("kvroute.io/kv-events",
                "endpoint=tcp://*:6000;replay-endpoint=tcp://*:6100;topic=kv@a;block-size=32;dp-size=2;"
                        + "hash-algo=sha256_cbor;hash-seed=42")));
        withTemplates.upsert(ready("b", "10.1.0.8", Map.of("app", "llm"), Map.of()));
        withTemplates.upsert(ready("c", "10.1.0.9", Map.of("app", "llm"), Map.of("kvroute.io/kv-events", "endpoint=6000")));
        apply(withTemplates.plan(registry.fleet(), id -> 0, 0), registry);
        Worker a = registry.get(Worker.idFor("http://10.1.0.7:8000")).orElseThrow();
        assertThat(a.kvEvents().eventEndpoints(a.host())).containsExactly("tcp://10.1.0.7:6000", "tcp://10.1.0.7:6001");
        assertThat(a.kvEvents().replayEndpoints(a.host())).containsExactly("tcp://10.1.0.7:6100", "tcp://10.1.0.7:6101");
        assertThat(a.kvEvents().topic()).isEqualTo("kv@a");
        assertThat(a.kvEvents().blockSize()).isEqualTo(32);
        assertThat(a.kvEvents().vllmHash()).isEqualTo(new VllmHashSpec("sha256_cbor", "42"));
        Worker b = registry.get(Worker.idFor("http://10.1.0.8:8000")).orElseThrow();
        assertThat(b.kvEvents().eventEndpoints(b.host())).containsExactly("tcp://10.1.0.8:5557");
        assertThat(b.kvEvents().vllmHash()).isNull();
        Worker c = registry.get(Worker.idFor("http://10.1.0.9:8000")).orElseThrow();
        assertThat(c.kvEvents()).as("a malformed annotation is not replaced by the default").isNull();
    }

    /**
     * The annotation of a pod whose worker already joined is added, edited, broken and removed (same
     * URL, pod Ready throughout): each change re-plans the worker's endpoints, never drains it; a
     * malformed value gives no endpoints (as at join); removal falls back to the default template.
     */
    @Test
    void kvEventsAnnotationChangedAfterJoin_followsThePod_withoutDrainingTheWorker() {
        FleetReconciler withTemplates = new FleetReconciler(new DiscoveryRules(CONFIG,
                io.kvroute.router.worker.KvEventsTemplates.parse("endpoint=tcp://*:5557;block-size=16", List.of()),
                "kvroute.io/kv-events"), DRAIN_TIMEOUT_NANOS);
        String id = Worker.idFor("http://10.1.0.7:8000");
        java.util.function.Function<String, List<ReconcileAction>> annotate = value -> {
            withTemplates.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"),
                    value == null ? Map.of() : Map.of("kvroute.io/kv-events", value)));
            List<ReconcileAction> actions = withTemplates.plan(registry.fleet(), x -> 0, 0);
            apply(actions, registry);
            assertThat(registry.fleet().routable()).extracting(Worker::id).containsExactly(id);
            return actions;
        };
        java.util.function.Supplier<List<String>> endpoints = () -> {
            Worker w = registry.get(id).orElseThrow();
            return w.kvEvents() == null ? List.of() : w.kvEvents().eventEndpoints(w.host());
        };

        annotate.apply(null);
        assertThat(endpoints.get()).as("default at join").containsExactly("tcp://10.1.0.7:5557");
        List<ReconcileAction> added = annotate.apply("endpoint=tcp://*:6000;block-size=16;dp-size=2");
        assertThat(added).singleElement().isInstanceOf(ReconcileAction.KvEvents.class);
        assertThat(endpoints.get()).containsExactly("tcp://10.1.0.7:6000", "tcp://10.1.0.7:6001");
        assertThat(annotate.apply("endpoint=tcp://*:6000;block-size=16;dp-size=2")).as("a resync replay").isEmpty();
        annotate.apply("endpoint=tcp://*:7000;topic=kv@a;block-size=16");
        assertThat(endpoints.get()).containsExactly("tcp://10.1.0.7:7000");
        assertThat(registry.get(id).orElseThrow().kvEvents().topic()).isEqualTo("kv@a");
        annotate.apply("endpoint=7000");
        assertThat(registry.get(id).orElseThrow().kvEvents()).as("malformed: none, as at join").isNull();
        annotate.apply(null);
        assertThat(endpoints.get()).as("removed: the default again").containsExactly("tcp://10.1.0.7:5557");

        FleetReconciler noDefault = new FleetReconciler(new DiscoveryRules(CONFIG,
                io.kvroute.router.worker.KvEventsTemplates.NONE, "kvroute.io/kv-events"), DRAIN_TIMEOUT_NANOS);
        noDefault.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of()));
        assertThat(noDefault.plan(registry.fleet(), x -> 0, 0)).as("removed without a default: none")
                .containsExactly(new ReconcileAction.KvEvents(id, null));
    }

    /** A worker whose /server_info advertised its endpoints keeps them whatever its pod's annotation says. */
    @Test
    void kvEventsAnnotationChange_leavesAServerInfoAdvertAlone() {
        FleetReconciler withTemplates = new FleetReconciler(new DiscoveryRules(CONFIG,
                io.kvroute.router.worker.KvEventsTemplates.NONE, "kvroute.io/kv-events"), DRAIN_TIMEOUT_NANOS);
        withTemplates.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"), Map.of()));
        apply(withTemplates.plan(registry.fleet(), x -> 0, 0), registry);
        String id = Worker.idFor("http://10.1.0.7:8000");
        io.kvroute.router.worker.KvEventsAdvert advertised = io.kvroute.router.worker.KvEventsTemplate
                .parse("endpoint=tcp://*:5557;block-size=64").advert();
        registry.update(id, w -> w.withServerInfoKvEvents(advertised));
        withTemplates.upsert(ready("a", "10.1.0.7", Map.of("app", "llm"),
                Map.of("kvroute.io/kv-events", "endpoint=tcp://*:6000;block-size=16")));
        List<ReconcileAction> actions = withTemplates.plan(registry.fleet(), x -> 0, 0);
        assertThat(actions).isEmpty();
        new ReconcileAction.KvEvents(id, null).applyTo(registry); // planned just before the advert arrived
        assertThat(registry.get(id).orElseThrow().kvEvents()).isEqualTo(advertised);
    }
}
