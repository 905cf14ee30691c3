package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.plugin.RouterMain;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The router's upstream HTTP client behaves as a gateway's must (as Jetty's ProxyHandler configures
 * its own): one client's upstream cookies never reach another client's request (they did, with the
 * client's default cookie store), the router does not ask workers for compressed bodies it would then
 * decode (it did: {@code Accept-Encoding: gzip}), and a worker's 401 reaches the client with its body.
 * A real worker on a real Jetty server records what each POST carried.
 */
class GatewayClientHygieneTest {

    private Server worker;
    private final List<String> cookies = new CopyOnWriteArrayList<>();
    private final List<String> acceptEncodings = new CopyOnWriteArrayList<>();
    private RouterMain.RunningRouter router;
    private Http http;

    @BeforeEach
    void start() throws Exception {
        worker = new Server();
        ServerConnector connector = new ServerConnector(worker);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        worker.addConnector(connector);
        worker.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                String body = "{}";
                if ("POST".equals(request.getMethod())) {
                    cookies.add(String.valueOf(request.getHeaders().get(HttpHeader.COOKIE)));
                    acceptEncodings.add(String.valueOf(request.getHeaders().get(HttpHeader.ACCEPT_ENCODING)));
                    response.getHeaders().put(HttpHeader.SET_COOKIE, "session=for-client-a; Path=/");
                    if (request.getHttpURI().getPath().endsWith("/completions") && cookies.size() == 3) {
                        response.setStatus(401);
                        response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Basic realm=\"worker\"");
                        body = "{\"error\":{\"message\":\"worker says no\",\"type\":\"authentication_error\",\"code\":401}}";
                    } else {
                        body = "{\"id\":\"c\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                                + "\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}";
                    }
                } else if (Request.getPathInContext(request).equals("/server_info")) {
                    body = "{\"model_id\":\"m\"}";
                }
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        worker.start();
        router = RouterMain.start("--host", "127.0.0.1", "--port", "0", "--policy", "round_robin", "--model-ids", "m",
                "--worker-urls", "http://127.0.0.1:" + connector.getLocalPort(), "--retry-max-attempts", "1");
        http = new Http();
        http.client.getProtocolHandlers().clear(); // the test's client relays nothing; it must not interpret 401s
    }

    @AfterEach
    void stop() throws Exception {
        http.close();
        router.close();
        worker.stop();
    }

    @Test
    void aWorkersCookieNeverRidesOnAnotherClientsRequest_andNoCompressionIsAsked() throws Exception {
        String chat = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
        assertThat(http.postJson(router.baseUrl() + "/v1/chat/completions", chat).getStatus()).isEqualTo(200);
        assertThat(http.postJson(router.baseUrl() + "/v1/chat/completions", chat).getStatus()).isEqualTo(200);

        assertThat(cookies).containsExactly("null", "null");
        assertThat(acceptEncodings).containsExactly("null", "null");
    }

    @Test
    void aWorkers401_reachesTheClientAsSent() throws Exception {
        String chat = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
        http.postJson(router.baseUrl() + "/v1/chat/completions", chat);
        http.postJson(router.baseUrl() + "/v1/chat/completions", chat);
        ContentResponse denied = http.postJson(router.baseUrl() + "/v1/completions", "{\"model\":\"m\",\"prompt\":\"hi\"}");

        assertThat(denied.getStatus()).isEqualTo(401);
        assertThat(denied.getContentAsString()).contains("worker says no");
        assertThat(cookies).hasSize(3).containsOnly("null");
    }
}
