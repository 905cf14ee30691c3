package io.kvroute.demo;

import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.config.ConfigException;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.plugin.RouterMain;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code java -jar kvroute-demo.jar}: starts mock GPU workers and the router in one JVM on
 * ephemeral loopback ports, drives a multi-tenant chat workload through the router, and prints a
 * summary. {@code worker} and {@code router} run each part alone for a multi-process layout.
 */
@Command(name = "kvroute-demo", mixinStandardHelpOptions = true,
        description = "kvroute in one command: mock GPU workers + router + a chat workload.",
        subcommands = {DemoMain.WorkerCommand.class, DemoMain.RouterCommand.class})
public final class DemoMain implements Callable<Integer> {

    @Option(names = "--workers", description = "Mock workers to start (default 4).")
    int workers = 4;

    @Option(names = "--requests", description = "Chat requests to send (default 300).")
    int requests = 300;

    @Option(names = "--concurrency", description = "Requests in flight at once (default 16).")
    int concurrency = 16;

    @Option(names = "--tenants", description = "Tenants, each with its own long system prompt (default 8).")
    int tenants = 8;

    @Option(names = "--policy", description = "Router policy (default cache_aware).")
    String policy = "cache_aware";

    @Option(names = "--pd-requests", description = "Requests in phase 2, the prefill/decode fleet; 0 skips it (default 100).")
    int pdRequests = 100;

    @Option(names = "--max-tokens", description = "Output tokens per request (default 24).")
    int maxTokens = 24;

    @Option(names = "--seed", description = "Workload seed (default 42).")
    long seed = 42;

    @Option(names = "--json", description = "End with a single-line JSON summary.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        DemoRun run = new DemoRun(workers, requests, concurrency, tenants, policy, maxTokens, seed, pdRequests);
        DemoSummary summary = run.execute(json ? System.err : System.out);
        if (json) {
            System.out.println(summary.toJson());
        } else {
            summary.print(System.out);
        }
        return summary.errors() + summary.pdErrors() == 0 ? 0 : 1;
    }

    @Command(name = "worker", description = "Run one mock GPU worker (flags as kvroute-mock-worker).",
            mixinStandardHelpOptions = false)
    static final class WorkerCommand implements Callable<Integer> {
        @CommandLine.Unmatched
        List<String> args = new ArrayList<>();

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            if (MockWorkerMain.printHelpIfRequested(spec.commandLine().getOut(), args.toArray(String[]::new))) {
                return 0;
            }
            List<String> all = resolveBundled(args);
            if (!all.contains("--port") && all.stream().noneMatch(a -> a.startsWith("--port="))) {
                all.add("--port=30001");
            }
            MockWorkerMain.MockWorker worker = MockWorkerMain.start(all.toArray(String[]::new));
            Runtime.getRuntime().addShutdownHook(new Thread(worker::close));
            System.out.println("mock GPU worker listening on " + worker.baseUrl());
            worker.server().join();
            return 0;
        }
    }

    @Command(name = "router", description = "Run the router (flags as kvroute-router, e.g. --worker-urls URL,URL --port P).")
    static final class RouterCommand implements Callable<Integer> {
        @CommandLine.Unmatched
        List<String> args = new ArrayList<>();

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            if (RouterOptions.printHelpIfRequested(spec.commandLine().getOut(), args.toArray(String[]::new))) {
                return 0;
            }
            RouterMain.RunningRouter router;
            try {
                router = RouterMain.start(resolveBundled(args).toArray(String[]::new));
            } catch (ConfigException e) {
                System.err.println("kvroute-router: " + e.getMessage());
                return 2;
            }
            Runtime.getRuntime().addShutdownHook(new Thread(router::close));
            System.out.println("kvroute router listening on " + router.baseUrl());
            router.server().join();
            return 0;
        }
    }

    /** Replaces {@code bundled:NAME} tokenizer paths with the unpacked bundled tokenizer. */
    static List<String> resolveBundled(List<String> args) {
        List<String> out = new ArrayList<>(args.size());
        for (String arg : args) {
            if (arg.startsWith("--tokenizer-path=")) {
                out.add("--tokenizer-path=" + io.kvroute.mock.BundledTokenizer.resolve(arg.substring("--tokenizer-path=".length())));
            } else {
                out.add(io.kvroute.mock.BundledTokenizer.resolve(arg));
            }
        }
        return out;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new DemoMain()).setExecutionExceptionHandler(MockWorkerMain.BAD_FLAG_VALUE).execute(args));
    }
}
