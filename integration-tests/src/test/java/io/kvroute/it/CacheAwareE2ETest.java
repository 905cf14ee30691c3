package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.dispatch.Headers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;

/**
 * Cache-aware routing end to end: 4 mock workers whose KV pools each hold only a few tenants'
 * prefixes. Routing every tenant to the worker that already holds its prefix keeps the measured
 * hit rate (from the workers' own {@code cached_tokens}) far above round_robin, which makes every
 * worker cycle through every tenant and evict.
 *
 * <p>Where a tenant's first request lands is the min-load fallback's choice (power of two over
 * nearly idle workers, so close to random); a worker that draws five of the twelve tenants cannot
 * hold them all and evicts too. The hit rate therefore varies from run to run (0.52 to 0.87 seen,
 * round_robin 0.21 to 0.28; a model of these pools under uniformly random placement puts 1 % of
 * placements below 0.54 and 1 in 20,000 below 0.40), so the test asks for 1.5x round_robin and prints
 * the placement. A tenant may move: when its worker evicts the prefix, the worker's KV events say so
 * and the next request is placed afresh.
 */
class CacheAwareE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int TENANTS = 12;
    private static final String[] WORDS = {"alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda"};

    /** Each tenant's system prompt: about 1,500 Qwen3 tokens of tenant-specific text. */
    private static List<String> tenantPrompts() {
        SplittableRandom rng = new SplittableRandom(7);
        List<String> prompts = new ArrayList<>();
        for (int t = 0; t < TENANTS; t++) {
            StringBuilder text = new StringBuilder("Tenant " + t + " policy manual.");
            for (int w = 0; w < 700; w++) {
                text.append(' ').append(WORDS[rng.nextInt(WORDS.length)]).append(rng.nextInt(100));
            }
            prompts.add(text.toString());
        }
        return prompts;
    }

    /** Sends {@code requests} chats (tenants in a seeded random order), returns cached / prompt tokens. */
    static double hitRate(TestFleet fleet, Http http, int requests, int concurrency) throws Exception {
        return run(fleet, http, requests, concurrency).hitRate();
    }

    /** The measured hit rate and, per tenant, the workers that served it (from {@code x-kvroute-worker}). */
    record Outcome(double hitRate, Map<Integer, Set<String>> workersByTenant) {}

    static Outcome run(TestFleet fleet, Http http, int requests, int concurrency) throws Exception {
        List<String> prompts = tenantPrompts();
        SplittableRandom rng = new SplittableRandom(11);
        long prompt = 0;
        long cached = 0;
        Map<Integer, Set<String>> workersByTenant = new TreeMap<>();
        for (int sent = 0; sent < requests; sent += concurrency) {
            List<CompletableFuture<ContentResponse>> batch = new ArrayList<>();
            List<Integer> batchTenants = new ArrayList<>();
            for (int i = 0; i < concurrency; i++) {
                int tenant = rng.nextInt(TENANTS);
                batchTenants.add(tenant);
                String body = "{\"messages\":[{\"role\":\"system\",\"content\":" + JSON.writeValueAsString(prompts.get(tenant))
                        + "},{\"role\":\"user\",\"content\":\"question " + (sent + i) + "\"}],\"max_tokens\":2}";
                batch.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return http.postJson(fleet.url("/v1/chat/completions"), body);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            for (int i = 0; i < batch.size(); i++) {
                ContentResponse response = batch.get(i).get(60, TimeUnit.SECONDS);
                assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
                workersByTenant.computeIfAbsent(batchTenants.get(i), t -> new TreeSet<>())
                        .add(String.valueOf(response.getHeaders().get(Headers.WORKER)));
                JsonNode usage = JSON.readTree(response.getContentAsString()).path("usage");
                prompt += usage.path("prompt_tokens").asLong();
                cached += usage.path("prompt_tokens_details").path("cached_tokens").asLong();
            }
        }
        return new Outcome((double) cached / prompt, workersByTenant);
    }

    static List<String> workerArgs() {
        // Room for about four tenants' prefixes per worker: round-robin must evict.
        return List.of("--tokenizer-path", BundledTokenizer.qwen3().toString(), "--kv-capacity-tokens", "7000",
                "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "2");
    }

    @Test
    void cacheAware_raisesTheMeasuredHitRateFarAboveRoundRobin() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        double roundRobin;
        Outcome cacheAware;
        try (Http http = new Http()) {
            try (TestFleet fleet = TestFleet.start(4, workerArgs(), List.of("--policy", "round_robin", "--tokenizer-path", tokenizer))) {
                roundRobin = hitRate(fleet, http, 120, 4);
            }
            try (TestFleet fleet = TestFleet.start(4, workerArgs(), List.of("--policy", "cache_aware", "--tokenizer-path", tokenizer))) {
                cacheAware = run(fleet, http, 120, 4);
                String scrape = http.get(fleet.url("/metrics")).getContentAsString();
                assertThat(scrape).contains("kvroute_cache_aware_decisions_total").contains("decision=\"cache_hit\"");
                assertThat(scrape).contains("kvroute_prefix_tree_nodes").contains("kvroute_prefix_tree_bytes");
            }
        }
        System.out.printf("cache hit rate: cache_aware %.3f, round_robin %.3f; cache_aware placement %s%n",
                cacheAware.hitRate(), roundRobin, cacheAware.workersByTenant());
        assertThat(cacheAware.workersByTenant()).hasSize(TENANTS);
        assertThat(cacheAware.hitRate()).as("cache_aware %.3f vs round_robin %.3f", cacheAware.hitRate(), roundRobin)
                .isGreaterThan(roundRobin * 1.5);
    }
}
