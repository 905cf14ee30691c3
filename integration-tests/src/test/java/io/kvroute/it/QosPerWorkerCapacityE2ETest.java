package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.tenant.TenantDirectory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-worker capacity end to end ({@code --qos-capacity-scope worker}, the default with tenants): a real router with
 * {@code --policy cache_aware} over two mock workers. One request puts a long prompt on one worker; then a burst of
 * requests sharing that prompt arrives at once. cache_aware wants every one of them on the prefix holder, whose
 * engine would serve them in arrival order; with per-worker capacity the holder gets at most what it has room for,
 * the rest go to the other worker while it has room, and the excess waits at the router. Every request completes.
 *
 * <p>{@code --cache-affinity-min-matched-tokens 32}: the shared prompt (about 150 tokens) is a cache hit, so without
 * the capacity filter cache_aware sends the whole burst to the holder (measured: 8 at once there, none on the other).
 *
 * <p>Sizes: each request costs its estimated input (body bytes / 4, about 200 tokens) plus {@code max_tokens} 1000,
 * so about 1,200 tokens; a worker holds 2,500, room for two at once and never three. That prompt is too short for
 * the holder to be worth waiting for ({@code --qos-holder-wait-ms}: at least 256 cached tokens); the long prompt
 * (about 610 shared tokens of 650, {@code max_tokens} 250: about 900 tokens, again two per worker) is, so with the
 * wait on its burst waits for the holder and is served there, cached, instead of partly uncached on the other worker.
 */
class QosPerWorkerCapacityE2ETest {

    private static final String TENANTS = "tenants:\n"
            + "  - {name: chat, api_key_sha256: " + TenantDirectory.sha256Hex("sk-chat") + "}\n"
            + "classes:\n" // no reservations: the default class may use a worker's whole capacity
            + "  system: {reserved_share: 0}\n"
            + "  interactive: {reserved_share: 0}\n"
            + "  default: {reserved_share: 0, queue_timeout_ms: 60000}\n";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int BURST = 8;
    private static final int PER_WORKER = 2;

    @TempDir
    Path dir;

    private static String chat(int question) {
        return chat(question, 10, 1000);
    }

    /** A chat whose system prompt repeats one sentence {@code repeats} times (about 15 tokens each). */
    private static String chat(int question, int repeats, int maxTokens) {
        return "{\"model\":\"mock-model\",\"max_tokens\":" + maxTokens + ",\"messages\":[{\"role\":\"system\",\"content\":\""
                + "You are the support assistant of a shop that sells kettles. ".repeat(repeats) + "\"},"
                + "{\"role\":\"user\",\"content\":\"question " + question + "\"}]}";
    }

    private static CompletableFuture<ContentResponse> send(Http http, String url, String body) {
        var request = http.client.newRequest(url).method(HttpMethod.POST).timeout(60, TimeUnit.SECONDS)
                .headers(h -> h.put("Authorization", "Bearer sk-chat"))
                .body(new StringRequestContent("application/json", body));
        return new CompletableResponseListener(request, 1 << 20).send();
    }

    /**
     * What the burst did: the prefix holder and the other worker, the scrape, and the cached prompt tokens the
     * workers reported for the burst ({@code usage.prompt_tokens_details.cached_tokens}, summed).
     */
    private record Burst(MockWorkerMain.MockWorker holder, MockWorkerMain.MockWorker other, String scrape,
            long cachedTokens) {}

    /** One request puts the prompt on a worker, then {@link #BURST} sharing it arrive at once; all must complete. */
    private Burst burst(String... extraRouterArgs) throws Exception {
        return burst(QosPerWorkerCapacityE2ETest::chat, extraRouterArgs);
    }

    private Burst burst(IntFunction<String> chat, String... extraRouterArgs) throws Exception {
        Path file = dir.resolve("tenants.yaml");
        Files.writeString(file, TENANTS);
        List<String> routerArgs = new ArrayList<>(List.of("--policy", "cache_aware", "--cache-affinity-min-matched-tokens",
                "32", "--tenants-file", file.toString(), "--qos-worker-capacity-tokens", "2500"));
        routerArgs.addAll(List.of(extraRouterArgs));
        try (TestFleet fleet = TestFleet.start(2, List.of("--decode-ms-per-step", "1"), routerArgs);
                Http http = new Http()) {
            String url = fleet.url("/v1/chat/completions");
            assertThat(send(http, url, chat.apply(0)).get(30, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
            MockWorkerMain.MockWorker holder = fleet.workers.stream().filter(w -> w.handler().requests() == 1)
                    .findFirst().orElseThrow();
            MockWorkerMain.MockWorker other = fleet.workers.get(fleet.workers.get(0) == holder ? 1 : 0);
            List<CompletableFuture<ContentResponse>> burst = new ArrayList<>();
            for (int i = 1; i <= BURST; i++) {
                burst.add(send(http, url, chat.apply(i)));
            }
            long cached = 0;
            for (CompletableFuture<ContentResponse> reply : burst) {
                ContentResponse r = reply.get(60, TimeUnit.SECONDS);
                assertThat(r.getStatus()).as("every request completes").isEqualTo(200);
                cached += JSON.readTree(r.getContentAsString()).path("usage").path("prompt_tokens_details")
                        .path("cached_tokens").asLong();
            }
            assertThat(holder.handler().requests() + other.handler().requests()).isEqualTo(1 + BURST);
            return new Burst(holder, other, http.get(fleet.url("/metrics")).getContentAsString(), cached);
        }
    }

    @Test
    void aBurstSharingOnePrefix_neverPilesMoreThanItsCapacityOntoTheHolder_theExcessWaitsAndAllComplete()
            throws Exception {
        Burst run = burst();
        assertThat(run.holder().handler().peakGenerationsInFlight()).as("the prefix holder never had more than its room")
                .isBetween(1, PER_WORKER);
        assertThat(run.other().handler().peakGenerationsInFlight()).isLessThanOrEqualTo(PER_WORKER);
        assertThat(run.other().handler().requests()).as("the other worker took what the holder had no room for")
                .isPositive();
        assertThat(MetricSum.of(run.scrape(), "kvroute_qos_queue_wait_seconds_sum", "tenant=\"chat\""))
                .as("the excess waited at the router").isPositive();
        assertThat(MetricSum.of(run.scrape(), "kvroute_qos_shed_total")).isZero();
    }

    /**
     * A burst whose shared prompt is worth waiting for: with the wait on (5 s, longer than the burst takes) the excess
     * waits for the holder and is served there, two at a time, every one cached; with 0 (today's placement) part of
     * it runs on the other worker, the first there uncached.
     */
    @Test
    void aBurstSharingALongPrompt_waitsForTheHolderAndIsServedThereCached_onlyWithTheWaitOn() throws Exception {
        IntFunction<String> longChat = q -> chat(q, 40, 250);
        Burst waited = burst(longChat, "--qos-holder-wait-ms", "5000");
        Burst placedAtOnce = burst(longChat, "--qos-holder-wait-ms", "0");

        assertThat(waited.holder().handler().requests()).as("the whole burst on the holder").isEqualTo(1 + BURST);
        assertThat(waited.holder().handler().peakGenerationsInFlight()).isBetween(1, PER_WORKER);
        assertThat(MetricSum.of(waited.scrape(), "kvroute_qos_holder_waits_total", "outcome=\"holder\""))
                .as("the excess waited for the holder").isGreaterThanOrEqualTo(BURST - 2 * PER_WORKER);
        assertThat(MetricSum.of(waited.scrape(), "kvroute_qos_holder_waits_total", "outcome=\"bound_passed\""))
                .isZero();

        assertThat(placedAtOnce.other().handler().requests()).as("without the wait the other worker takes some")
                .isPositive();
        assertThat(MetricSum.of(placedAtOnce.scrape(), "kvroute_qos_holder_waits_total")).isZero();
        assertThat(waited.cachedTokens()).as("more of the burst's prompts cached with the wait")
                .isGreaterThan(placedAtOnce.cachedTokens());
        assertThat(MetricSum.of(waited.scrape(), "kvroute_qos_shed_total")).isZero();
    }

    /** The earlier, fleet-wide capacity, still a flag: the same burst goes where cache_aware sends it, the holder. */
    @Test
    void withFleetWideCapacity_theSameBurstPilesOntoTheHolder() throws Exception {
        Burst run = burst("--qos-capacity-scope", "fleet");
        assertThat(run.holder().handler().peakGenerationsInFlight()).as("the fleet's 5,000 tokens admit four at once")
                .isGreaterThan(PER_WORKER);
        assertThat(MetricSum.of(run.scrape(), "kvroute_qos_shed_total")).isZero();
    }
}
