package io.kvroute.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A worker on a raw loopback socket that answers {@code /health}, {@code /server_info}, {@code /v1/models}
 * (and 404 on {@code /metrics}) and never answers a
 * generation request: it reads the request, then waits for the other end to close the connection, which is how
 * an engine learns that its request was aborted (SGLang and vLLM abort the generation when the HTTP connection
 * goes). A raw socket sees the close for certain, with no server library in between.
 */
final class HoldingRawWorker implements AutoCloseable {

    final AtomicInteger generations = new AtomicInteger();
    final CountDownLatch generationAborted = new CountDownLatch(1);
    private final ServerSocket server;
    private final Thread acceptor;
    /** What {@code /server_info} answers (a prefill worker's names its KV bootstrap port). */
    private final String serverInfo;

    HoldingRawWorker() throws IOException {
        this("{\"model_id\":\"m\"}");
    }

    /** A worker whose {@code /server_info} answers {@code serverInfoJson}. */
    HoldingRawWorker(String serverInfoJson) throws IOException {
        serverInfo = serverInfoJson;
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::acceptLoop, "holding-raw-worker");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                Thread t = new Thread(() -> serve(socket), "holding-raw-worker-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            InputStream in = socket.getInputStream();
            String head = readHead(in);
            if (head == null) {
                return;
            }
            int length = contentLength(head);
            in.readNBytes(length);
            String path = head.split(" ", 3)[1];
            OutputStream out = socket.getOutputStream();
            if (path.equals("/health") || path.equals("/server_info") || path.equals("/v1/models")
                    || path.equals("/metrics")) {
                byte[] body = (path.equals("/v1/models") ? "{\"object\":\"list\",\"data\":[{\"id\":\"m\"}]}"
                        : serverInfo).getBytes(StandardCharsets.UTF_8);
                String status = path.equals("/metrics") ? "404 Not Found" : "200 OK"; // an engine without metrics
                out.write(("HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "
                        + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                return;
            }
            generations.incrementAndGet();
            // hold: no answer; a read of -1 (or a reset) means the router closed the connection
            while (in.read() >= 0) {
                // the router sends nothing more on this connection
            }
            generationAborted.countDown();
        } catch (IOException reset) {
            generationAborted.countDown();
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            byte[] h = head.toByteArray();
            int n = h.length;
            if (n >= 4 && h[n - 4] == '\r' && h[n - 3] == '\n' && h[n - 2] == '\r' && h[n - 1] == '\n') {
                return head.toString(StandardCharsets.US_ASCII);
            }
        }
        return null;
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                return Integer.parseInt(line.substring(15).trim());
            }
        }
        return 0;
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
