package io.kvroute.it;

import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.util.ArrayList;
import java.util.List;

/** Mock GPU workers plus a router, all in process on ephemeral loopback ports. */
final class TestFleet implements AutoCloseable {

    final List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
    RouterMain.RunningRouter router;

    static TestFleet start(int workerCount, List<String> workerArgs, List<String> routerArgs) throws Exception {
        TestFleet fleet = new TestFleet();
        try {
            List<String> urls = new ArrayList<>();
            for (int i = 0; i < workerCount; i++) {
                List<String> args = new ArrayList<>(List.of("--port", "0"));
                args.addAll(workerArgs);
                MockWorkerMain.MockWorker worker = MockWorkerMain.start(args.toArray(String[]::new));
                fleet.workers.add(worker);
                urls.add(worker.baseUrl());
            }
            List<String> args = new ArrayList<>(List.of("--port", "0", "--worker-urls", String.join(",", urls)));
            args.addAll(routerArgs);
            fleet.router = RouterMain.start(args.toArray(String[]::new));
            return fleet;
        } catch (Exception e) {
            fleet.close();
            throw e;
        }
    }

    String url(String path) {
        return router.baseUrl() + path;
    }

    @Override
    public void close() {
        if (router != null) {
            router.close();
        }
        for (MockWorkerMain.MockWorker worker : workers) {
            try {
                worker.close();
            } catch (RuntimeException ignored) {
                // already stopped by the test
            }
        }
    }
}
