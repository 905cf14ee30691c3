package io.kvroute.bench.scenario;

import io.kvroute.bench.fleet.Fleet;
import io.kvroute.bench.fleet.FleetFactory;
import io.kvroute.bench.fleet.FleetSpec;
import java.util.List;

/**
 * Starts a {@link LoopbackOpenAiServer} as a whole "fleet" (it is router and worker at once), for the
 * {@code harness-selftest} scenario. Worker args: {@code --first-token-ms N --per-token-ms N}.
 */
final class LoopbackFleetFactory implements FleetFactory {

    @Override
    public Fleet start(FleetSpec spec) throws Exception {
        long firstTokenMillis = longArg(spec.workerArgs(), "--first-token-ms", 0);
        long perTokenMillis = longArg(spec.workerArgs(), "--per-token-ms", 1);
        LoopbackOpenAiServer server = new LoopbackOpenAiServer(firstTokenMillis, perTokenMillis, 200);
        return new Fleet() {
            @Override
            public String routerUrl() {
                return server.baseUrl();
            }

            @Override
            public List<String> workerUrls() {
                return List.of(server.baseUrl());
            }

            @Override
            public void close() throws Exception {
                server.close();
            }
        };
    }

    private static long longArg(List<String> args, String flag, long fallback) {
        int i = args.indexOf(flag);
        if (i < 0) {
            return fallback;
        }
        if (i + 1 >= args.size()) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        try {
            return Long.parseLong(args.get(i + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be an integer: " + args.get(i + 1), e);
        }
    }
}
