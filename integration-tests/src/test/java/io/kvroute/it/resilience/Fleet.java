package io.kvroute.it.resilience;

import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A router plus workers, all in process on loopback: mock GPU workers (restartable on their port)
 * and {@link ScriptedWorker}s. Closing stops everything that is still running.
 */
final class Fleet implements AutoCloseable {

    private final List<String> mockArgs;
    final List<MockWorkerMain.MockWorker> mocks = new ArrayList<>();
    final List<ScriptedWorker> scripted = new ArrayList<>();
    private final Map<Integer, Integer> mockPorts = new ConcurrentHashMap<>();
    RouterMain.RunningRouter router;

    private Fleet(List<String> mockArgs) {
        this.mockArgs = mockArgs;
    }

    /** Starts {@code mockCount} mock workers, then {@code scriptedWorkers}, then the router over all of them. */
    static Fleet start(int mockCount, List<String> mockArgs, List<ScriptedWorker.Script> scriptedWorkers,
            List<String> routerArgs) throws Exception {
        Fleet fleet = new Fleet(mockArgs);
        try {
            List<String> urls = new ArrayList<>();
            for (int i = 0; i < mockCount; i++) {
                MockWorkerMain.MockWorker worker = fleet.startMock(0);
                fleet.mocks.add(worker);
                fleet.mockPorts.put(i, port(worker.baseUrl()));
                urls.add(worker.baseUrl());
            }
            for (ScriptedWorker.Script script : scriptedWorkers) {
                ScriptedWorker worker = ScriptedWorker.start(script);
                fleet.scripted.add(worker);
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

    private MockWorkerMain.MockWorker startMock(int port) throws Exception {
        List<String> args = new ArrayList<>(List.of("--port", String.valueOf(port)));
        args.addAll(mockArgs);
        return MockWorkerMain.start(args.toArray(String[]::new));
    }

    private static int port(String baseUrl) {
        return Integer.parseInt(baseUrl.substring(baseUrl.lastIndexOf(':') + 1));
    }

    String url(String path) {
        return router.baseUrl() + path;
    }

    /** Stops mock worker {@code index} abruptly (its connections close). */
    void killMock(int index) {
        try {
            mocks.get(index).close();
        } catch (RuntimeException ignored) {
            // already stopped
        }
    }

    /** Starts mock worker {@code index} again on the same port. */
    void reviveMock(int index) throws Exception {
        mocks.set(index, startMock(mockPorts.get(index)));
    }

    /** The router's id of a worker, for registry and in-flight lookups. */
    static String idOf(String baseUrl) {
        return Worker.idFor(baseUrl);
    }

    /** Router-local in-flight requests summed over every registered worker. */
    int routerInFlight() {
        int sum = 0;
        for (Worker worker : router.router().workers().fleet().all()) {
            sum += router.router().inFlight().get(worker.id());
        }
        return sum;
    }

    @Override
    public void close() {
        if (router != null) {
            try {
                router.close();
            } catch (RuntimeException ignored) {
                // a test may have drained and stopped it
            }
        }
        for (MockWorkerMain.MockWorker worker : mocks) {
            try {
                worker.close();
            } catch (RuntimeException ignored) {
                // already stopped by the test
            }
        }
        for (ScriptedWorker worker : scripted) {
            try {
                worker.close();
            } catch (Exception ignored) {
                // already stopped
            }
        }
    }
}
