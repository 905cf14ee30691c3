package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

/**
 * A PD router is ready only when a PD pair can serve. The bug this guards: workers count as healthy from the
 * start, a prefill worker's KV bootstrap port is learned from its {@code /server_info} a moment later, and in
 * between {@code /readyz} said ready and the first chat went out with {@code bootstrap_port: null}; the decode
 * engine answered {@code 400 a decode worker needs bootstrap_host, bootstrap_port and bootstrap_room}, which the
 * client saw as its own {@code invalid_request_error} (about half of fresh starts). Here the prefill worker's
 * {@code /server_info} is held behind a gate, which makes that window as long as the test wants.
 */
class PdReadinessE2ETest {

    private static final String CHAT = "{\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],"
            + "\"stream\":true,\"max_tokens\":4}";

    @Test
    void readyz_staysUnreadyUntilThePrefillBootstrapPortIsKnown_andTheFirstChatAfterReadyIsServed() throws Exception {
        try (MockWorkerMain.MockWorker prefill = MockWorkerMain.start("--port", "0", "--role", "prefill");
                MockWorkerMain.MockWorker decode = MockWorkerMain.start("--port", "0", "--role", "decode");
                GatedServerInfo gate = new GatedServerInfo(prefill.baseUrl());
                Http http = new Http()) {
            RouterMain.RunningRouter router = RouterMain.start("--port", "0", "--prefill-urls", gate.url(),
                    "--decode-urls", decode.baseUrl(), "--health-check-interval-secs", "0.2");
            try {
                // the router has probed the prefill worker healthy and asked for its /server_info
                await().atMost(Duration.ofSeconds(10)).until(() -> gate.serverInfoRequests.get() > 0);

                var notYet = http.get(router.baseUrl() + "/readyz");
                assertThat(notYet.getStatus()).as(notYet.getContentAsString()).isEqualTo(503);

                Http.Reply early = http.stream(router.baseUrl() + "/v1/chat/completions", CHAT).get(30, TimeUnit.SECONDS);
                assertThat(early.status()).as(early.body()).isEqualTo(503);
                assertThat(early.body()).doesNotContain("invalid_request_error").doesNotContain("bootstrap");
                assertThat(gate.inferenceRequests.get()).as("no request may reach a worker without its bootstrap port")
                        .isZero();

                gate.release();
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> http.get(router.baseUrl() + "/readyz").getStatus() == 200);

                Http.Reply first = http.stream(router.baseUrl() + "/v1/chat/completions", CHAT).get(30, TimeUnit.SECONDS);
                assertThat(first.status()).as(first.body()).isEqualTo(200);
                assertThat(first.body()).contains("data: [DONE]");
            } finally {
                router.close();
            }
        }
    }

    /**
     * Jetty's reverse proxy in front of one worker that holds every {@code /server_info} request until
     * {@link #release} (without blocking a thread), and counts what passes.
     */
    private static final class GatedServerInfo implements AutoCloseable {
        final AtomicInteger serverInfoRequests = new AtomicInteger();
        final AtomicInteger inferenceRequests = new AtomicInteger();
        private final CompletableFuture<Void> opened = new CompletableFuture<>();
        private final Server server = new Server();
        private final ServerConnector connector = new ServerConnector(server);

        GatedServerInfo(String workerUrl) throws Exception {
            connector.setHost("127.0.0.1");
            connector.setPort(0);
            server.addConnector(connector);
            ProxyHandler.Reverse proxy = new ProxyHandler.Reverse(
                    request -> HttpURI.build(workerUrl + request.getHttpURI().getPathQuery()));
            server.setHandler(new org.eclipse.jetty.server.Handler.Wrapper(proxy) {
                @Override
                public boolean handle(Request request, Response response, Callback callback) throws Exception {
                    String path = request.getHttpURI().getPath();
                    if (path.startsWith("/v1/") || path.equals("/generate")) {
                        inferenceRequests.incrementAndGet();
                    }
                    if (!path.equals("/server_info")) {
                        return super.handle(request, response, callback);
                    }
                    serverInfoRequests.incrementAndGet();
                    opened.thenRun(() -> {
                        try {
                            if (!super.handle(request, response, callback)) {
                                callback.failed(new IllegalStateException("not handled"));
                            }
                        } catch (Exception e) {
                            callback.failed(e);
                        }
                    });
                    return true;
                }
            });
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + connector.getLocalPort();
        }

        void release() {
            opened.complete(null);
        }

        @Override
        public void close() throws Exception {
            release();
            server.stop();
        }
    }
}
