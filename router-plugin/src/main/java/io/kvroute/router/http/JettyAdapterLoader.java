package io.kvroute.router.http;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.lora.AdapterLoadClient;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;

/**
 * {@link AdapterLoadClient} over the router's upstream HTTP client: {@code POST /v1/load_lora_adapter} to a
 * vLLM worker (vLLM {@code vllm/entrypoints/serve/lora/api_router.py}), {@code POST /load_lora_adapter} to any
 * other (SGLang {@code http_server.py}), body {@code {"lora_name": ..., "lora_path": ...}}. A 200 is success,
 * and so is vLLM's 400 "has already been loaded" (another router replica got there first; vLLM
 * {@code vllm/entrypoints/openai/models/serving.py}). Any other answer fails the load with the worker's
 * status and the start of its body. Thread-safe.
 */
final class JettyAdapterLoader implements AdapterLoadClient {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Largest answer read from a load request (vLLM answers one line of text). */
    private static final int MAX_ANSWER_BYTES = 64 * 1024;

    private final HttpClient client;

    JettyAdapterLoader(HttpClient client) {
        this.client = requireNonNull(client, "client");
    }

    /** The load path for the worker's engine. */
    static String loadPath(Worker worker) {
        return worker.engine() == EngineType.VLLM ? "/v1/load_lora_adapter" : "/load_lora_adapter";
    }

    @Override
    public CompletableFuture<Void> load(Worker worker, String adapter, String path, long timeoutMillis) {
        ObjectNode body = JSON.createObjectNode();
        body.put("lora_name", adapter);
        body.put("lora_path", path);
        CompletableFuture<Void> done = new CompletableFuture<>();
        client.newRequest(worker.url() + loadPath(worker))
                .method(HttpMethod.POST)
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .body(new StringRequestContent("application/json", body.toString(), StandardCharsets.UTF_8))
                .send(new BufferingResponseListener(MAX_ANSWER_BYTES) {
                    @Override
                    public void onComplete(Result result) {
                        if (result.isFailed()) {
                            Throwable f = result.getFailure();
                            done.completeExceptionally(f instanceof TimeoutException ? f
                                    : new LoadFailed("worker unreachable: " + f));
                            return;
                        }
                        int status = result.getResponse().getStatus();
                        String answer = getContentAsString();
                        answer = answer == null ? "" : answer;
                        if (status == 200 || (status == 400 && answer.contains("already been loaded"))) {
                            done.complete(null);
                        } else {
                            done.completeExceptionally(new LoadFailed("worker answered " + status + ": "
                                    + answer.substring(0, Math.min(200, answer.length()))));
                        }
                    }
                });
        return done;
    }
}
