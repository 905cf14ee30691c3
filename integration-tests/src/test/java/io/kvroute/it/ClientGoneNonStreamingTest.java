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

    /**
     * The watch never takes a byte from Jetty: a client that pipelines a second request behind a pending
     * one (the watch sees bytes, not an end of stream) gets both answers on the same connection, and a
     * kept-alive connection serves request after request.
     */
    @Test
    void pipelinedAndKeptAliveRequests_areAllAnswered() throws Exception {
        try (io.kvroute.mock.MockWorkerMain.MockWorker worker = io.kvroute.mock.MockWorkerMain.start("--port", "0",
                "--decode-ms-per-step", "20", "--prefill-ms-per-1k", "1");
                RouterMain.RunningRouter router = RouterMain.start("--host", "127.0.0.1", "--port", "0",
                        "--policy", "round_robin", "--worker-urls", worker.baseUrl())) {
            int port = java.net.URI.create(router.baseUrl()).getPort();
            await().atMost(Duration.ofSeconds(20)).until(() -> answers(port, 1, 1) == 1);
            assertThat(answers(port, 2, 2)).as("two pipelined requests, two answers").isEqualTo(2);
            assertThat(pipelinedWhilePending(port, router.baseUrl()))
                    .as("a request pipelined while the first one is pending (the watch is armed) is answered")
                    .isEqualTo(2);
            assertThat(answers(port, 200, 1)).as("200 requests one after another on one connection").isEqualTo(200);
        }
    }

    /** Sends {@code total} chats on one connection, {@code perWrite} at a time; returns the 200 answers read. */
    private static int answers(int port, int total, int perWrite) throws Exception {
        byte[] body = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":5}"
                .getBytes(StandardCharsets.UTF_8);
        byte[] one = ("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n" + new String(body, StandardCharsets.UTF_8))
                .getBytes(StandardCharsets.UTF_8);
        int ok = 0;
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(20_000);
            java.io.BufferedInputStream in = new java.io.BufferedInputStream(socket.getInputStream());
            for (int sent = 0; sent < total; sent += perWrite) {
                for (int i = 0; i < perWrite; i++) {
                    socket.getOutputStream().write(one);
                }
                socket.getOutputStream().flush();
                for (int i = 0; i < perWrite; i++) {
                    String status = readResponse(in);
                    if (status.startsWith("HTTP/1.1 200")) {
                        ok++;
                    }
                }
            }
        }
        return ok;
    }

    /**
     * Sends a slow chat, waits until the router is serving it (its watch armed on the connection), then
     * pipelines a second chat on the same connection; returns the 200 answers read.
     */
    private static int pipelinedWhilePending(int port, String routerUrl) throws Exception {
        byte[] slow = chat(60);
        byte[] quick = chat(2);
        int ok = 0;
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
                org.eclipse.jetty.client.HttpClient metrics = new org.eclipse.jetty.client.HttpClient()) {
            metrics.start();
            socket.setSoTimeout(20_000);
            socket.getOutputStream().write(slow);
            socket.getOutputStream().flush();
            await().atMost(Duration.ofSeconds(10)).until(() -> metrics.GET(routerUrl + "/metrics").getContentAsString()
                    .lines().anyMatch(l -> l.startsWith("kvroute_requests_in_flight") && l.endsWith(" 1.0")));
            socket.getOutputStream().write(quick);
            socket.getOutputStream().flush();
            java.io.BufferedInputStream in = new java.io.BufferedInputStream(socket.getInputStream());
            for (int i = 0; i < 2; i++) {
                if (readResponse(in).startsWith("HTTP/1.1 200")) {
                    ok++;
                }
            }
        }
        return ok;
    }

    private static byte[] chat(int maxTokens) {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":" + maxTokens + "}";
        return ("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
                .getBytes(StandardCharsets.UTF_8);
    }

    /** Reads one response with a Content-Length body; returns its status line. */
    private static String readResponse(java.io.InputStream in) throws Exception {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                return "EOF";
            }
            head.append((char) b);
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        in.readNBytes(length);
        return head.substring(0, head.indexOf("\r\n"));
    }

}
