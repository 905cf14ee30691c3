package io.kvroute.it.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Drill 5: 200 concurrent streaming clients that read slowly (tiny receive buffers, 256 bytes per
 * 100 ms) must not stall the router for everyone else; afterwards every slow stream still ends
 * cleanly. Backpressure is per exchange, so the slow ones only slow themselves.
 */
class SlowClientsDrillTest {

    private static final int SLOW_CLIENTS = 200;

    @Test
    void twoHundredSlowStreamingClients_doNotStallOtherClients() throws Exception {
        try (Fleet fleet = Fleet.start(2, List.of("--decode-ms-per-step", "50"), List.of(), List.of());
                Client client = new Client(60)) {
            int port = Integer.parseInt(fleet.router.baseUrl().substring(fleet.router.baseUrl().lastIndexOf(':') + 1));
            // 200 tokens at 50 ms per step: each slow stream lives for 10 s or more, well past the fast phase
            String body = Client.chat(true, 200);
            byte[] request = ("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Connection: close\r\nContent-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.UTF_8);
            List<SocketChannel> slow = new ArrayList<>();
            List<StringBuilder> received = new ArrayList<>();
            try {
                for (int i = 0; i < SLOW_CLIENTS; i++) {
                    SocketChannel channel = SocketChannel.open();
                    channel.setOption(StandardSocketOptions.SO_RCVBUF, 2048);
                    channel.connect(new InetSocketAddress("127.0.0.1", port));
                    channel.write(ByteBuffer.wrap(request));
                    channel.configureBlocking(false);
                    slow.add(channel);
                    received.add(new StringBuilder());
                }
                // slow readers: 256 bytes per client every 100 ms, on one thread
                java.util.concurrent.atomic.AtomicBoolean dawdle = new java.util.concurrent.atomic.AtomicBoolean(true);
                Thread reader = new Thread(() -> {
                    ByteBuffer buffer = ByteBuffer.allocate(256);
                    while (dawdle.get()) {
                        for (int i = 0; i < slow.size(); i++) {
                            buffer.clear();
                            try {
                                int n = slow.get(i).read(buffer);
                                if (n > 0) {
                                    received.get(i).append(new String(buffer.array(), 0, n, StandardCharsets.ISO_8859_1));
                                }
                            } catch (java.io.IOException e) {
                                // reported when the stream is checked
                            }
                        }
                        try {
                            Thread.sleep(100);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }, "slow-readers");
                reader.start();
                Thread.sleep(1_000);
                assertThat(fleet.router.router().activeRequests()).as("the slow streams are open").isGreaterThan(SLOW_CLIENTS / 2);

                // meanwhile, ordinary clients are served
                List<CompletableFuture<Client.Reply>> others = new ArrayList<>();
                for (int i = 0; i < 30; i++) {
                    others.add(client.postAsync(fleet.url("/v1/chat/completions"), Client.chat(i % 3 == 0, 5)));
                }
                for (CompletableFuture<Client.Reply> other : others) {
                    Client.Reply reply = other.get(45, TimeUnit.SECONDS); // generous: a stalled router would never answer
                    assertThat(reply.status()).isEqualTo(200);
                    assertThat(reply.failure()).isNull();
                }
                assertThat(client.get(fleet.url("/healthz")).status()).isEqualTo(200);
                assertThat(client.get(fleet.url("/metrics")).status()).isEqualTo(200);

                // now the slow clients catch up: every stream must end cleanly
                dawdle.set(false);
                reader.join(10_000);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                for (int i = 0; i < slow.size(); i++) {
                    SocketChannel channel = slow.get(i);
                    channel.configureBlocking(true);
                    channel.socket().setSoTimeout(1_000);
                    ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
                    while (System.nanoTime() < deadline) {
                        buffer.clear();
                        int n = channel.read(buffer);
                        if (n < 0) {
                            break;
                        }
                        received.get(i).append(new String(buffer.array(), 0, n, StandardCharsets.ISO_8859_1));
                    }
                    String text = received.get(i).toString();
                    assertThat(text).as("slow client %d", i).startsWith("HTTP/1.1 200").contains("data: [DONE]")
                            .doesNotContain("\"error\"");
                }
            } finally {
                for (SocketChannel channel : slow) {
                    channel.close();
                }
            }
        }
    }
}
