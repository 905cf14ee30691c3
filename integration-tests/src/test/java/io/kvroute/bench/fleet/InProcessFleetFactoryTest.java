package io.kvroute.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.bench.scenario.TimeModelSpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ServiceLoader-registered fleet factory against the real router and mock workers (stand-in
 * tokenizer, to keep the test fast; the smoke test covers the Qwen3 tokenizer).
 */
class InProcessFleetFactoryTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void serviceLoader_findsTheInProcessFactory() {
        assertThat(FleetFactories.load()).isInstanceOf(InProcessFleetFactory.class);
    }

    @Test
    void regularFleet_acceptsTheTimeModelFlagsAndAnswersThroughTheRouter() throws Exception {
        FleetSpec spec = new FleetSpec(2, 0, TimeModelSpec.h100Small(8).workerArgs(), List.of(),
                List.of("--policy", "round_robin"), false);
        try (Fleet fleet = new InProcessFleetFactory().start(spec)) {
            assertThat(fleet.workerUrls()).hasSize(2);
            HttpResponse<String> response = chat(fleet.routerUrl());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).contains("\"prompt_tokens\"");
        }
    }

    @Test
    void pdFleet_returnsOnlyOnceTheRouterKnowsEveryBootstrapPort_andServes() throws Exception {
        FleetSpec spec = new FleetSpec(2, 1, TimeModelSpec.h100Small(8).workerArgs(),
                List.of("--decode-segment-tokens", "4"), List.of(), false);
        try (Fleet fleet = new InProcessFleetFactory().start(spec)) {
            assertThat(fleet.workerUrls()).hasSize(3);
            HttpResponse<String> response = chat(fleet.routerUrl());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        }
    }

    @Test
    void unknownPolicyOrFlag_isRejectedBeforeAnyWorkerStarts() {
        FleetSpec unknownPolicy = new FleetSpec(1, 0, List.of(), List.of(), List.of("--policy", "no_such_policy"), false);
        FleetSpec unknownFlag = new FleetSpec(1, 0, List.of(), List.of(), List.of("--no-such-flag", "1"), false);
        assertThatThrownBy(() -> new InProcessFleetFactory().start(unknownPolicy))
                .isInstanceOf(RouterRejectedException.class).hasMessageContaining("no_such_policy");
        assertThatThrownBy(() -> new InProcessFleetFactory().start(unknownFlag))
                .isInstanceOf(RouterRejectedException.class).hasMessageContaining("--no-such-flag");
    }

    private static HttpResponse<String> chat(String routerUrl) throws Exception {
        String body = "{\"model\":\"mock-qwen3\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";
        return HTTP.send(HttpRequest.newBuilder(URI.create(routerUrl + "/v1/chat/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
