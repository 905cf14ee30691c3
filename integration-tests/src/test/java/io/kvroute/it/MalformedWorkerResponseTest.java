package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.plugin.RouterMain;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Workers that break HTTP framing, on a raw loopback socket (a real server would not send these). The relay
 * forwards the worker's {@code Content-Length}, so framing is the router's business too: a
 * response with both {@code Transfer-Encoding} and {@code Content-Length} is a 502 with a short message
 * naming the fault (not the client library's dump of its connection state), and bytes past the declared
 * length never reach the client.
 */
class MalformedWorkerResponseTest {

    private static final byte[] ANSWER = ("{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":"
            + "{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}").getBytes(StandardCharsets.UTF_8);
    private static final String CHAT = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    private RawWorker worker;
    private RouterMain.RunningRouter router;
    private Http http;

    private void start(String postAnswerHead, byte[] postAnswerBody) throws Exception {
        worker = new RawWorker(postAnswerHead, postAnswerBody);
        router = RouterMain.start("--host", "127.0.0.1", "--port", "0", "--policy", "round_robin", "--model-ids", "m",
                "--worker-urls", "http://127.0.0.1:" + worker.port(), "--retry-max-attempts", "1");
        http = new Http();
    }

    @AfterEach
    void stop() throws Exception {
        if (http != null) {
            http.close();
        }
        if (router != null) {
            router.close();
        }
        if (worker != null) {
            worker.close();
        }
    }

    @Test
    void transferEncodingWithContentLength_isA502NamingTheFault() throws Exception {
        byte[] chunked = concat(String.format("%x\r\n", ANSWER.length).getBytes(StandardCharsets.US_ASCII), ANSWER,
                "\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        start("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n", chunked);
        ContentResponse response = http.postJson(router.baseUrl() + "/v1/chat/completions", CHAT);
        assertThat(response.getStatus()).isEqualTo(502);
        String message = new ObjectMapper().readTree(response.getContentAsString()).path("error").path("message").asText();
        assertThat(message).contains("malformed HTTP response from the worker").contains("Transfer-Encoding and Content-Length")
                .doesNotContain("HttpConnectionOverHTTP").hasSizeLessThan(200);
    }

    @Test
    void bytesPastTheDeclaredLength_neverReachTheClient() throws Exception {
        start("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + ANSWER.length + "\r\n",
                concat(ANSWER, "EXTRA-GARBAGE".getBytes(StandardCharsets.US_ASCII)));
        ContentResponse response = http.postJson(router.baseUrl() + "/v1/chat/completions", CHAT);
        assertThat(response.getStatus()).isEqualTo(200);
        assertThat(response.getContent()).isEqualTo(ANSWER);
        assertThat(response.getHeaders().get("Content-Length")).isEqualTo(String.valueOf(ANSWER.length));
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    /** One connection per exchange: reads a request head (and its body), answers, closes. */
    private static final class RawWorker implements AutoCloseable {
        private final ServerSocket server;
        private final Thread acceptor;

        RawWorker(String postHead, byte[] postBody) throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try (Socket socket = server.accept()) {
                        String head = readRequest(socket.getInputStream());
                        OutputStream out = socket.getOutputStream();
                        if (head.startsWith("POST")) {
                            out.write((postHead + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                            out.write(postBody);
                        } else {
                            byte[] body = (head.contains("/server_info") ? "{\"model_id\":\"m\"}" : "{}")
                                    .getBytes(StandardCharsets.UTF_8);
                            out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                            out.write(body);
                        }
                        out.flush();
                    } catch (IOException closedOrReset) {
                        // the next accept tells whether the server is closed
                    }
                }
            }, "raw-worker");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        /** The request head; its body (by Content-Length) is read and dropped. */
        private static String readRequest(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                head.write(b);
                byte[] h = head.toByteArray();
                int n = h.length;
                if (n >= 4 && h[n - 4] == '\r' && h[n - 3] == '\n' && h[n - 2] == '\r' && h[n - 1] == '\n') {
                    break;
                }
            }
            String text = head.toString(StandardCharsets.US_ASCII);
            for (String line : text.split("\r\n")) {
                if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                    in.readNBytes(Integer.parseInt(line.substring(15).trim()));
                }
            }
            return text;
        }

        @Override
        public void close() throws Exception {
            server.close();
            acceptor.join(5_000);
        }
    }
}
