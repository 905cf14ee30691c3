package io.kvroute.router.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.ServiceDiscoveryConfig;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import io.kvroute.router.worker.WorkerRole;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The reconciler against a naive model under random pod event sequences: after every event the
 * real {@link WorkerRegistry} (driven only by the reconciler's actions) must hold every worker a
 * Ready pod asks for, routable and in its role, and no routable worker that no pod asks for (a
 * ghost). A small IP pool makes pods reuse each other's addresses, as churn in a real cluster does.
 */
class FleetReconcilerModelTest {

    static final ServiceDiscoveryConfig CONFIG = new ServiceDiscoveryConfig(true, Map.of("app", "llm"),
            Map.of("app", "llm", "role", "prefill"), Map.of("app", "llm", "role", "decode"), "ns", 8000,
            "sglang.ai/bootstrap-port");
    static final long DRAIN_TIMEOUT_NANOS = 5_000_000_000L;

    /** The model: what worker a pod asks for, written out plainly. */
    record Want(String url, WorkerRole role, Integer bootstrapPort) {}

    static Want naiveWant(PodFacts pod) {
        if (!(pod.running() && pod.ready() && !pod.terminating() && pod.ip() != null)) {
            return null;
        }
        if (!"llm".equals(pod.labels().get("app"))) {
            return null;
        }
        String roleLabel = pod.labels().get("role");
        WorkerRole role = "prefill".equals(roleLabel) ? WorkerRole.PREFILL
                : "decode".equals(roleLabel) ? WorkerRole.DECODE : WorkerRole.REGULAR;
        String portText = pod.annotations().getOrDefault("kvroute.io/worker-port", "8000");
        if (!portText.matches("\\d+")) {
            return null;
        }
        Integer bootstrap = null;
        String bootText = pod.annotations().get("sglang.ai/bootstrap-port");
        if (role == WorkerRole.PREFILL && bootText != null && bootText.matches("\\d+")) {
            bootstrap = Integer.valueOf(bootText);
        }
        return new Want("http://" + pod.ip() + ":" + portText, role, bootstrap);
    }

    static Map<String, Want> naiveDesired(Map<String, PodFacts> pods) {
        Map<String, Want> byUrl = new HashMap<>();
        for (String key : new TreeSet<>(pods.keySet())) {
            Want want = naiveWant(pods.get(key));
            if (want != null && !byUrl.containsKey(want.url())) {
                byUrl.put(want.url(), want);
            }
        }
        return byUrl;
    }

    static PodFacts randomPod(SplittableRandom random, String key) {
        Map<String, String> labels = new HashMap<>();
        if (random.nextInt(6) != 0) {
            labels.put("app", "llm");
        }
        String[] roles = {null, "prefill", "decode", "other"};
        String role = roles[random.nextInt(roles.length)];
        if (role != null) {
            labels.put("role", role);
        }
        Map<String, String> annotations = new HashMap<>();
        String[] boots = {null, "8998", "9001", "bad"};
        String boot = boots[random.nextInt(boots.length)];
        if (boot != null) {
            annotations.put("sglang.ai/bootstrap-port", boot);
        }
        String[] ports = {null, null, "8001", "x"};
        String port = ports[random.nextInt(ports.length)];
        if (port != null) {
            annotations.put("kvroute.io/worker-port", port);
        }
        String ip = random.nextInt(8) == 0 ? null : "10.0.0." + (1 + random.nextInt(6));
        return new PodFacts(key, random.nextInt(5) != 0, random.nextInt(4) != 0, random.nextInt(10) == 0, ip,
                labels, annotations);
    }

    @Test
    void randomEventSequences_registryMatchesNaiveModelAfterEveryEvent() {
        for (long seed = 1; seed <= 20; seed++) {
            runSequence(seed, 300);
        }
    }

    private static void runSequence(long seed, int steps) {
        SplittableRandom random = new SplittableRandom(seed);
        FleetReconciler reconciler = new FleetReconciler(new DiscoveryRules(CONFIG), DRAIN_TIMEOUT_NANOS);
        WorkerRegistry registry = new WorkerRegistry();
        Map<String, PodFacts> model = new TreeMap<>();
        Map<String, Integer> inFlight = new HashMap<>();
        long now = 0;
        for (int step = 0; step < steps; step++) {
            int op = random.nextInt(10);
            String key = "ns/pod-" + random.nextInt(10);
            if (op < 6) {
                PodFacts pod = randomPod(random, key);
                model.put(key, pod);
                reconciler.upsert(pod);
            } else if (op < 8) {
                model.remove(key);
                reconciler.delete(key);
            } else {
                now += random.nextLong(3_000_000_000L);
                List<Worker> all = registry.fleet().all();
                if (!all.isEmpty()) {
                    inFlight.put(all.get(random.nextInt(all.size())).id(), random.nextInt(3));
                }
            }
            apply(reconciler.plan(registry.fleet(), id -> inFlight.getOrDefault(id, 0), now), registry);
            assertMatchesModel(seed, step, model, registry);
        }
        // Settle: nothing in flight, two plans (drain, then remove) leave exactly the desired workers.
        inFlight.clear();
        for (int i = 0; i < 2; i++) {
            apply(reconciler.plan(registry.fleet(), id -> 0, now), registry);
        }
        Map<String, Want> desired = naiveDesired(model);
        assertThat(registry.fleet().workers().values()).extracting(Worker::url)
                .as("seed %d settled", seed).containsExactlyInAnyOrderElementsOf(desired.keySet());
        assertThat(registry.fleet().draining()).as("seed %d settled", seed).isEmpty();
    }

    static void apply(List<ReconcileAction> actions, WorkerRegistry registry) {
        actions.forEach(action -> action.applyTo(registry));
    }

    private static void assertMatchesModel(long seed, int step, Map<String, PodFacts> model, WorkerRegistry registry) {
        WorkerRegistry.Fleet fleet = registry.fleet();
        Map<String, Want> desired = naiveDesired(model);
        String where = "seed " + seed + " step " + step;
        for (Want want : desired.values()) {
            Worker worker = fleet.workers().get(Worker.idFor(want.url()));
            assertThat(worker).as(where + ": desired %s registered", want.url()).isNotNull();
            assertThat(fleet.isDraining(worker.id())).as(where + ": desired %s draining", want.url()).isFalse();
            assertThat(worker.role()).as(where + ": role of %s", want.url()).isEqualTo(want.role());
            if (want.bootstrapPort() != null) {
                assertThat(worker.bootstrapPort()).as(where + ": bootstrap port of %s", want.url())
                        .isEqualTo(want.bootstrapPort());
            }
            if (want.role() != WorkerRole.PREFILL) {
                assertThat(worker.bootstrapPort()).as(where + ": non-prefill %s keeps no bootstrap port", want.url()).isNull();
            }
        }
        List<String> ghosts = new ArrayList<>();
        for (Worker routable : fleet.routable()) {
            if (!desired.containsKey(routable.url())) {
                ghosts.add(routable.url());
            }
        }
        assertThat(ghosts).as(where + ": routable workers no pod asks for").isEmpty();
    }
}
