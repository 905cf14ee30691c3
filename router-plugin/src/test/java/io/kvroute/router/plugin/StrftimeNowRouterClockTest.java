package io.kvroute.router.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.LoopbackServer;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.tokenize.TokenizerArchive;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A date-stamping chat template ({@code strftime_now}, as gpt-oss and Meta's Llama 3.2/3.3 templates use it)
 * renders the date of the wall clock handed to {@link KvRouter#create(io.kvroute.router.config.RouterConfig,
 * java.util.function.LongSupplier, InstantSource)}, through the router's real tokenize path: a real router on
 * loopback with the real Qwen3 tokenizer.json and a {@code chat_template.jinja}, a stub SGLang worker that
 * records the body it receives, and the forwarded {@code input_ids} compared with the tokenizer's ids of the
 * text rendered by hand for that date (far from today, so the system clock can never pass).
 */
class StrftimeNowRouterClockTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** 2031-03-05T23:30:00Z: in UTC the 5th; a renderer on a local zone east of UTC would say the 6th. */
    private static final Instant PINNED = Instant.parse("2031-03-05T23:30:00Z");
    private static final String TEMPLATE = "{{- 'Today is ' + strftime_now('%d %b %Y') + '.\\n' -}}"
            + "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
            + "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

    @TempDir
    Path tmp;

    @Test
    void strftimeNow_rendersTheInjectedWallClocksDate_inTheForwardedInputIds() throws Exception {
        Path dir = TokenizerArchive.materialize(getClass().getClassLoader(), "models/qwen3",
                Files.createDirectories(tmp.resolve("dated")));
        Files.writeString(dir.resolve("chat_template.jinja"), TEMPLATE);
        List<JsonNode> received = new CopyOnWriteArrayList<>();
        Server worker = LoopbackServer.start(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                String path = Request.getPathInContext(request);
                boolean chat = path.equals("/v1/chat/completions");
                if (chat) {
                    received.add(JSON.readTree(Content.Source.asString(request, StandardCharsets.UTF_8)));
                }
                response.setStatus(chat || path.equals("/health") ? 200 : 404);
                response.getHeaders().put("Content-Type", "application/json");
                response.write(true, java.nio.ByteBuffer.wrap((chat
                        ? "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                                + "\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}"
                        : "{}").getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        var config = RouterOptions.parse("--port", "0", "--worker-urls", LoopbackServer.url(worker), "--model-ids", "m",
                "--load-source", "none", "--engine-type", "sglang", "--tokenizer-path", dir.toString());
        try (RouterMain.RunningRouter router = RouterMain.start(config,
                KvRouter.create(config, System::nanoTime, InstantSource.fixed(PINNED)));
                TokenizerRegistry reference = TokenizerRegistry.load(Map.of("m", dir))) {
            HttpResponse<String> reply = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create(router.baseUrl() + "/v1/chat/completions"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(
                            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"What day is it?\"}]}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
            assertThat(received).hasSize(1);
            JsonNode ids = received.get(0).path("input_ids");
            assertThat(ids.isArray()).as("forwarded input_ids in %s", received.get(0)).isTrue();
            int[] forwarded = new int[ids.size()];
            for (int i = 0; i < forwarded.length; i++) {
                forwarded[i] = ids.get(i).asInt();
            }
            int[] expected = reference.forModel("m").orElseThrow().encode(
                    "Today is 05 Mar 2031.\n<|im_start|>user\nWhat day is it?<|im_end|>\n<|im_start|>assistant\n");
            assertThat(forwarded).isEqualTo(expected);
        } finally {
            worker.stop();
        }
    }
}
