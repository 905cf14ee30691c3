package io.kvroute.router.discovery;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP relay between the Kubernetes client and the mock API server, so a test can cut the
 * network (every open connection, the watch's WebSocket included, is reset) and keep it cut
 * ({@link #refuse}) while the mock server and its state stay up, as when a router loses its route
 * to a live API server.
 */
final class TcpProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int upstreamPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean refusing;

    TcpProxy(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    /** Resets every open connection; with {@code keepRefusing}, new ones are reset at once until {@link #restore}. */
    void cut(boolean keepRefusing) {
        refusing = keepRefusing;
        for (Socket socket : open) {
            closeQuietly(socket);
        }
    }

    void restore() {
        refusing = false;
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (refusing) {
                    client.setSoLinger(true, 0);
                    client.close();
                    continue;
                }
                Socket upstream = new Socket();
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort));
                open.add(client);
                open.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                // listener closed, or one connection failed: keep accepting until closed
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // cut or closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    private void closeQuietly(Socket socket) {
        open.remove(socket);
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        cut(false);
    }
}
