package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.tokenize.TokenizerArchive;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exact KV index on a non-Qwen model: four mock workers with the real Llama 3 tokenizer and chat
 * template publish KV events (block hashes seeded per process, correct {@code token_ids}); replica A
 * spreads conversations round-robin and does NOT forward ids, so each worker renders the Llama 3
 * template itself. Replica T ({@code --cache-index exact --kv-events-hash tokens}) renders the same
 * conversation with its own template encoder and must send it to the worker that holds its blocks,
 * from the events alone. Before templates reached the tokenize path, T keyed Llama chats on the message
 * texts joined with newlines, which never match the engine's blocks. The same holds for Llama 3.1 completion
 * prompts, which the engine tokenizes with a leading BOS token.
 */
class Llama3KvEventsE2ETest {

    @TempDir
    static Path tmp;

    private static String conversation(int i) {
        String system = "You are the routing assistant of a large fleet; always answer briefly. ".repeat(6);
        return "{\"messages\":[{\"role\":\"system\",\"content\":\"" + system + "\"},"
                + "{\"role\":\"user\",\"content\":\"" + ("question " + i + " asks about caches. ").repeat(5) + "\"},"
                + "{\"role\":\"assistant\",\"content\":\"" + ("answer " + i + " names a worker. ").repeat(5) + "\"},"
                + "{\"role\":\"user\",\"content\":\"and then " + i + "?\"}],\"max_tokens\":2}";
    }

    private static double scrape(Http http, RouterMain.RunningRouter r, String name, String... labels) throws Exception {
        return MetricSum.of(http.get(r.baseUrl() + "/metrics").getContentAsString(), name, labels);
    }

    /** What a repeated-request run checks on the exact router after its assertions on routing and decisions. */
    private interface ExtraChecks {
        void check(Http http, RouterMain.RunningRouter exactRouter) throws Exception;
    }

    @Test
    void llama3Fleet_exactIndexRoutesARepeatedConversationToItsHolder() throws Exception {
        Path llama = TokenizerArchive.materialize(getClass().getClassLoader(), "models/llama3",
                Files.createDirectories(tmp.resolve("llama3")));
        repeatedRequestsGoToTheirHolder(llama.toString(), "/v1/chat/completions",
                Llama3KvEventsE2ETest::conversation, List.of("--disable-input-ids-forwarding"),
                (http, tok) -> assertThat(scrape(http, tok, "kvroute_input_ids_forwarding_total", "outcome=\"forwarded\""))
                        .isEqualTo(5));
    }

    /**
     * Completion prompts on a model whose tokenizer adds a BOS token (Llama 3.1's post-processor prepends
     * {@code <|begin_of_text|>}): the mock workers tokenize each {@code /v1/completions} prompt as SGLang does
     * (HF default {@code add_special_tokens=True}, sglang python/sglang/srt/managers/tokenizer_manager.py) and
     * publish those ids. Before the router added the tokenizer's special tokens to completion prompts, its ids
     * lacked the BOS the engine's blocks start with, so no block hash ever matched and T routed elsewhere.
     */
    @Test
    void llama31Fleet_exactIndexRoutesARepeatedCompletionPromptToItsHolder() throws Exception {
        repeatedRequestsGoToTheirHolder(BundledTokenizer.of("llama3_1").toString(), "/v1/completions",
                Llama3KvEventsE2ETest::completion, List.of(), (http, tok) -> { });
    }

    /**
     * A completion whose prompt is token ids (as vLLM's and SGLang's {@code /v1/completions} take them) routes on
     * those ids: the engines cache exactly them, so the exact index finds the holder. Before, the router had no
     * ids for such a prompt and keyed nothing.
     */
    @Test
    void llama31Fleet_exactIndexRoutesARepeatedTokenIdPromptToItsHolder() throws Exception {
        repeatedRequestsGoToTheirHolder(BundledTokenizer.of("llama3_1").toString(), "/v1/completions",
                Llama3KvEventsE2ETest::tokenIdCompletion, List.of(), (http, tok) -> { });
    }

    private static String tokenIdCompletion(int i) {
        StringBuilder ids = new StringBuilder();
        for (int k = 0; k < 160; k++) { // ten 16-token pages, ids inside Llama 3's regular vocabulary
            ids.append(k == 0 ? "" : ",").append(1_000 + (i * 7_919 + k * 104_729) % 100_000);
        }
        return "{\"prompt\":[" + ids + "],\"max_tokens\":2}";
    }

    private static String completion(int i) {
        return "{\"prompt\":\"" + ("Document " + i + " describes how a routing fleet keeps its caches warm. ").repeat(8)
                + "Summarize document " + i + ":\",\"max_tokens\":2}";
    }

    /**
     * Five requests, each first through round-robin replica A (which picks the holder), then through T: T
     * must pick the holder from KV events alone, with an exact-index {@code cache_hit} each time.
     */
    private static void repeatedRequestsGoToTheirHolder(String dir, String path, java.util.function.IntFunction<String> body,
            List<String> replicaAExtraArgs, ExtraChecks extra) throws Exception {
        List<String> replicaA = new ArrayList<>(List.of("--policy", "round_robin", "--cache-index", "approximate",
                "--tokenizer-path", dir));
        replicaA.addAll(replicaAExtraArgs);
        try (TestFleet fleet = TestFleet.start(4, List.of("--tokenizer-path", dir, "--decode-ms-per-step", "1",
                "--prefill-ms-per-1k", "1", "--kv-events-hash-seed", "random"), replicaA);
                Http http = new Http()) {
            List<String> urls = new ArrayList<>();
            fleet.workers.forEach(w -> urls.add(w.baseUrl()));
            try (RouterMain.RunningRouter tok = RouterMain.start(new String[] {"--port", "0", "--worker-urls",
                    String.join(",", urls), "--policy", "cache_aware", "--tokenizer-path", dir, "--cache-index", "exact",
                    "--cache-affinity-min-matched-tokens", "32", "--health-check-interval-secs", "0.2",
                    "--kv-events-hash", "tokens"})) {
                await().atMost(Duration.ofSeconds(30)).until(() -> scrape(http, tok, "kvroute_kv_events_workers_exact") == 4);
                for (int i = 0; i < 5; i++) {
                    double storedBefore = scrape(http, tok, "kvroute_kv_events_block_events_total");
                    ContentResponse viaA = http.postJson(fleet.url(path), body.apply(i));
                    assertThat(viaA.getStatus()).isEqualTo(200);
                    String holder = viaA.getHeaders().get("x-kvroute-worker");
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> scrape(http, tok, "kvroute_kv_events_block_events_total") > storedBefore);
                    ContentResponse viaT = http.postJson(tok.baseUrl() + path, body.apply(i));
                    assertThat(viaT.getStatus()).isEqualTo(200);
                    assertThat(viaT.getHeaders().get("x-kvroute-worker")).as("request %d", i).isEqualTo(holder);
                }
                assertThat(scrape(http, tok, "kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"",
                        "index=\"exact\"")).isEqualTo(5);
                for (String reason : List.of("unknown_parent", "missing_token_ids", "token_ids_length")) {
                    assertThat(scrape(http, tok, "kvroute_kv_events_malformed_total", "reason=\"" + reason + "\""))
                            .as(reason).isZero();
                }
                extra.check(http, tok);
            }
        }
    }
}
