package io.kvroute.bench.proxy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The minimal upstream of the proxy benchmarks, the role nginx's {@code return 200 '...'} plays in
 * an nginx-only baseline: every POST gets the same small chat completion, GET {@code /health} gets 200, and
 * nothing is parsed. The request body is consumed (discarded) so keep-alive connections stay usable.
 *
 * <p>Listening on {@code 0.0.0.0} lets one server answer as many "workers" as there are loopback
 * addresses (127.0.0.0/8 all route to {@code lo}); traffic is only ever sent to 127.x addresses.
 */
public final class FixedReplyUpstream implements AutoCloseable {

    static final byte[] CHAT_REPLY = ("{\"id\":\"cmpl-1\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
            + "\"message\":{\"role\":\"assistant\",\"content\":\"hello\"},\"finish_reason\":\"stop\"}],"
            + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":1,\"total_tokens\":13}}").getBytes(StandardCharsets.UTF_8);

    private final Server server;
    private final ServerConnector connector;

    public FixedReplyUpstream(String bindHost) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(64, 4);
        threads.setName("fixed-upstream");
        server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendDateHeader(false);
        connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
        connector.setHost(bindHost);
        connector.setPort(0);
        connector.setAcceptQueueSize(4096);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract.NonBlocking() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                if (HttpMethod.GET.is(request.getMethod())) {
                    response.setStatus(200);
                    response.write(true, ByteBuffer.wrap("{}".getBytes(StandardCharsets.UTF_8)), callback);
                    return true;
                }
                drainThenReply(request, response, callback);
                return true;
            }
        });
        server.start();
    }

    private static void drainThenReply(Request request, Response response, Callback callback) {
        while (true) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                request.demand(() -> drainThenReply(request, response, callback));
                return;
            }
            chunk.release();
            if (Content.Chunk.isFailure(chunk)) {
                callback.failed(chunk.getFailure());
                return;
            }
            if (chunk.isLast()) {
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, CHAT_REPLY.length);
                response.write(true, ByteBuffer.wrap(CHAT_REPLY), callback);
                return;
            }
        }
    }

    public int port() {
        return connector.getLocalPort();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
