package io.kvroute.router;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

/**
 * A vLLM-shaped worker on loopback ({@link LoopbackServer}): {@code /v1/models} lists the served names as
 * base cards ({@code parent} null; vLLM {@code vllm/entrypoints/openai/models/serving.py}), {@code /health}
 * answers 200, the chat and completion endpoints record each body and answer one short completion, and
 * every other path is a 404 (no {@code /server_info}: how the router tells vLLM in production).
 */
public final class VllmStubWorker {

    private VllmStubWorker() {}

    /** Starts a worker serving {@code names}, appending each inference body it receives to {@code received}. */
    public static Server start(List<String> names, List<String> received) throws Exception {
        StringBuilder cards = new StringBuilder();
        for (String n : names) {
            cards.append(cards.length() == 0 ? "" : ",").append("{\"id\":\"").append(n)
                    .append("\",\"object\":\"model\",\"owned_by\":\"vllm\",\"root\":\"/models/x\",\"parent\":null}");
        }
        String models = "{\"object\":\"list\",\"data\":[" + cards + "]}";
        return LoopbackServer.start(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                String path = Request.getPathInContext(request);
                String answer;
                if (path.equals("/v1/models")) {
                    answer = models;
                } else if (path.equals("/health")) {
                    answer = "";
                } else if (path.equals("/v1/chat/completions") || path.equals("/v1/completions")) {
                    received.add(Content.Source.asString(request, StandardCharsets.UTF_8));
                    answer = "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                            + "\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}],"
                            + "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}";
                } else {
                    response.setStatus(404); // no /server_info: vLLM in production
                    callback.succeeded();
                    return true;
                }
                response.setStatus(200);
                response.getHeaders().put("Content-Type", "application/json");
                response.write(true, ByteBuffer.wrap(answer.getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
    }
}
