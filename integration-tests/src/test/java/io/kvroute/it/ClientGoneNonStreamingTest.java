package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.router.plugin.RouterMain;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A client that leaves a non-streaming request is passed on: the router aborts the upstream request, so the
 * engine stops generating {@code max_tokens} for nobody (as the streaming path already did, where a failed
 * write tells). The client and the worker are raw sockets, so the close on each side is certain.
 */
class ClientGoneNonStreamingTest {

    static final String CHAT = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":4000}";

    /** Sends a non-streaming chat on a raw socket, waits until the worker holds it, then closes the socket. */
    static void sendAndLeave(String host, int port, String path, HoldingRawWorker worker) throws Exception {
        try (Socket client = new Socket(InetAddress.getByName(host), port)) {
            byte[] body = CHAT.getBytes(StandardCharsets.UTF_8);
            OutputStream out = client.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            await().atMost(Duration.ofSeconds(10)).until(() -> worker.generations.get() == 1);
        } // the client goes away here, before any answer
    }

    @Test
    void jettyAdapter_abortsTheUpstreamRequestWhenTheClientLeaves() throws Exception {
        try (HoldingRawWorker worker = new HoldingRawWorker();
                RouterMain.RunningRouter router = RouterMain.start("--host", "127.0.0.1", "--port", "0",
                        "--policy", "round_robin", "--model-ids", "m", "--worker-urls", worker.baseUrl(),
                        "--retry-max-attempts", "1", "--request-timeout-secs", "60")) {
            sendAndLeave("127.0.0.1", java.net.URI.create(router.baseUrl()).getPort(), "/v1/chat/completions", worker);
            assertThat(worker.generationAborted.await(10, TimeUnit.SECONDS))
                    .as("the worker's request was aborted after the client left").isTrue();
            assertThat(worker.generations.get()).as("and not retried elsewhere").isEqualTo(1);
        }
    }
}
