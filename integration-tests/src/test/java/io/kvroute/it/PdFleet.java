package io.kvroute.it;

import static org.awaitility.Awaitility.await;

import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** N prefill + M decode mock workers and a PD router, in process on loopback. */
final class PdFleet implements AutoCloseable {

    final List<MockWorkerMain.MockWorker> prefills = new ArrayList<>();
    final List<MockWorkerMain.MockWorker> decodes = new ArrayList<>();
    RouterMain.RunningRouter router;

    static PdFleet start(int prefillCount, int decodeCount, List<String> prefillArgs, List<String> decodeArgs,
            List<String> routerArgs) throws Exception {
        PdFleet fleet = new PdFleet();
        try {
            List<String> prefillUrls = new ArrayList<>();
            for (int i = 0; i < prefillCount; i++) {
                List<String> args = new ArrayList<>(List.of("--port", "0", "--role", "prefill"));
                args.addAll(prefillArgs);
                MockWorkerMain.MockWorker w = MockWorkerMain.start(args.toArray(String[]::new));
                fleet.prefills.add(w);
                prefillUrls.add(w.baseUrl());
            }
            List<String> decodeUrls = new ArrayList<>();
            for (int i = 0; i < decodeCount; i++) {
                List<String> args = new ArrayList<>(List.of("--port", "0", "--role", "decode"));
                args.addAll(decodeArgs);
                MockWorkerMain.MockWorker w = MockWorkerMain.start(args.toArray(String[]::new));
                fleet.decodes.add(w);
                decodeUrls.add(w.baseUrl());
            }
            List<String> args = new ArrayList<>(List.of("--port", "0", "--prefill-urls", String.join(",", prefillUrls),
                    "--decode-urls", String.join(",", decodeUrls), "--health-check-interval-secs", "0.2"));
            args.addAll(routerArgs);
            fleet.router = RouterMain.start(args.toArray(String[]::new));
            // bootstrap ports are learned from each prefill worker's /server_info
            await().atMost(Duration.ofSeconds(10)).until(() -> fleet.router.router().workers().fleet().all().stream()
                    .filter(w -> w.role() == WorkerRole.PREFILL).allMatch(w -> w.bootstrapPort() != null));
            return fleet;
        } catch (Exception e) {
            fleet.close();
            throw e;
        }
    }

    String url(String path) {
        return router.baseUrl() + path;
    }

    Worker routerView(MockWorkerMain.MockWorker worker) {
        return router.router().workers().get(Worker.idFor(worker.baseUrl())).orElseThrow();
    }

    @Override
    public void close() {
        if (router != null) {
            router.close();
        }
        for (MockWorkerMain.MockWorker w : prefills) {
            quietly(w);
        }
        for (MockWorkerMain.MockWorker w : decodes) {
            quietly(w);
        }
    }

    private static void quietly(MockWorkerMain.MockWorker worker) {
        try {
            worker.close();
        } catch (RuntimeException ignored) {
            // stopped by the test already
        }
    }
}
