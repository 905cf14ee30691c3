package io.kvroute.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.bench.client.ScheduledRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class WorkloadsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long MS = 1_000_000L;

    private static JsonNode body(ScheduledRequest r) {
        try {
            return JSON.readTree(r.jsonBody());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int promptChars(ScheduledRequest r) {
        int chars = 0;
        for (JsonNode m : body(r).path("messages")) {
            chars += m.path("content").asText().length();
        }
        return chars;
    }

    @Test
    void longFirstBurst_matchesLightLlmStudySchedule() {
        List<ScheduledRequest> rs = ShortLongWorkloads.longFirstBurst(ShortLongWorkloads.Sizes.burstFull(),
                new SplittableRandom(1), 4.0).requests();

        assertThat(rs).hasSize(96);
        List<ScheduledRequest> longs = rs.stream().filter(r -> r.requestClass().equals("long")).toList();
        List<ScheduledRequest> shorts = rs.stream().filter(r -> r.requestClass().equals("short")).toList();
        assertThat(longs).hasSize(48);
        assertThat(shorts).hasSize(48);
        for (int i = 0; i < 48; i++) {
            assertThat(longs.get(i).sendAtNanosFromStart()).isEqualTo(i * MS);
            assertThat(shorts.get(i).sendAtNanosFromStart()).isEqualTo((60 + i) * MS);
        }
        // LightLLM's study drove the engine with token-id lists: the prompt is exactly that many input_ids.
        assertThat(body(longs.get(0)).path("input_ids").size()).isEqualTo(16_384);
        assertThat(body(shorts.get(0)).path("input_ids").size()).isEqualTo(128);
        assertThat(body(longs.get(0)).path("input_ids").get(0)).isNotEqualTo(body(longs.get(1)).path("input_ids").get(0));
        JsonNode b = body(shorts.get(0));
        assertThat(b.path("stream").asBoolean()).isTrue();
        assertThat(b.path("stream_options").path("include_usage").asBoolean()).isTrue();
        assertThat(b.path("max_tokens").asInt()).isEqualTo(128);
        assertThat(shorts.get(0).path()).isEqualTo("/v1/chat/completions");
    }

    @Test
    void interleaved_is500PerSecondOneLongToThreeShort() {
        List<ScheduledRequest> rs = ShortLongWorkloads.interleaved(ShortLongWorkloads.Sizes.interleavedFull(),
                new SplittableRandom(1), 4.0).requests();

        assertThat(rs).hasSize(192);
        for (int i = 0; i < rs.size(); i++) {
            assertThat(rs.get(i).sendAtNanosFromStart()).isEqualTo(2L * i * MS);
            assertThat(rs.get(i).requestClass()).isEqualTo(i % 4 == 0 ? "long" : "short");
        }
        assertThat(rs.get(rs.size() - 1).sendAtNanosFromStart()).isEqualTo(382 * MS);
    }

    @Test
    void sameSeedSameBytes_differentSeedDifferentPrompts() {
        var sizes = ShortLongWorkloads.Sizes.burstQuick();
        List<ScheduledRequest> a = ShortLongWorkloads.longFirstBurst(sizes, new SplittableRandom(5), 4).requests();
        List<ScheduledRequest> b = ShortLongWorkloads.longFirstBurst(sizes, new SplittableRandom(5), 4).requests();
        List<ScheduledRequest> c = ShortLongWorkloads.longFirstBurst(sizes, new SplittableRandom(6), 4).requests();

        for (int i = 0; i < a.size(); i++) {
            assertThat(a.get(i).jsonBody()).isEqualTo(b.get(i).jsonBody());
            assertThat(a.get(i).jsonBody()).isNotEqualTo(c.get(i).jsonBody());
        }
    }

    @Test
    void multiTurn_eachTurnExtendsThePreviousConversation() {
        MultiTurnWorkload.Params p = MultiTurnWorkload.Params.quick();
        List<ScheduledRequest> rs = MultiTurnWorkload.generate(p, new SplittableRandom(2), 4.0).requests();

        assertThat(rs).hasSize(p.sessions() * p.turns());
        Map<String, List<ScheduledRequest>> bySession = new LinkedHashMap<>();
        rs.forEach(r -> bySession.computeIfAbsent(body(r).path("user").asText(), k -> new ArrayList<>()).add(r));
        assertThat(bySession).hasSize(p.sessions());
        for (List<ScheduledRequest> turns : bySession.values()) {
            for (int t = 1; t < turns.size(); t++) {
                JsonNode before = body(turns.get(t - 1)).path("messages");
                JsonNode after = body(turns.get(t)).path("messages");
                assertThat(after.size()).isEqualTo(before.size() + 2);
                for (int m = 0; m < before.size(); m++) {
                    assertThat(after.get(m)).isEqualTo(before.get(m));
                }
                assertThat(turns.get(t).tag()).isEqualTo("turn-" + (t + 1));
                assertThat(turns.get(t).sendAtNanosFromStart() - turns.get(t - 1).sendAtNanosFromStart())
                        .isEqualTo(p.thinkMillis() * MS);
            }
        }
        // different sessions open with different documents
        List<String> docs = bySession.values().stream()
                .map(t -> body(t.get(0)).path("messages").get(0).path("content").asText()).distinct().toList();
        assertThat(docs).hasSize(p.sessions());
        assertThat(rs).isSortedAccordingTo((x, y) -> Long.compare(x.sendAtNanosFromStart(), y.sendAtNanosFromStart()));
    }

    @Test
    void saturation_stepsRateUpAndTenantsShareTheirPrefix() {
        SaturationWorkload.Params full = SaturationWorkload.Params.full(40.0);
        // full schedule, short prompts: keeps the test fast
        SaturationWorkload.Params p = new SaturationWorkload.Params(full.tenants(), 32, 8, 8, 40.0,
                full.rateMultipliers(), full.stepMillis());
        List<ScheduledRequest> rs = SaturationWorkload.generate(p, new SplittableRandom(3), 4.0).requests();

        Map<String, Integer> perStep = new LinkedHashMap<>();
        rs.forEach(r -> perStep.merge(r.tag(), 1, Integer::sum));
        assertThat(perStep.keySet()).containsExactly("step-1@20.0rps", "step-2@30.0rps", "step-3@40.0rps",
                "step-4@50.0rps", "step-5@60.0rps");
        int step = 0;
        for (int count : perStep.values()) {
            double expected = 40.0 * p.rateMultipliers().get(step++) * 10; // rate x 10 s
            assertThat((double) count).isBetween(expected - 5 * Math.sqrt(expected), expected + 5 * Math.sqrt(expected));
        }
        for (int i = 0; i < rs.size(); i++) {
            long at = rs.get(i).sendAtNanosFromStart();
            int stepIndex = Integer.parseInt(rs.get(i).tag().substring(5, rs.get(i).tag().indexOf('@'))) - 1;
            assertThat(at).isBetween(stepIndex * 10_000 * MS, (stepIndex + 1) * 10_000 * MS);
        }
        Map<String, String> prefixByTenant = new LinkedHashMap<>();
        for (ScheduledRequest r : rs) {
            JsonNode b = body(r);
            String system = b.path("messages").get(0).path("content").asText();
            String previous = prefixByTenant.putIfAbsent(b.path("user").asText(), system);
            assertThat(previous == null || previous.equals(system)).isTrue();
        }
        assertThat(prefixByTenant).hasSize(p.tenants());
        assertThat(prefixByTenant.values()).doesNotHaveDuplicates();
    }

    @Test
    void longContext_idleThenLoadedPhases() {
        LongContextWorkload.Params p = LongContextWorkload.Params.full();
        List<ScheduledRequest> rs = LongContextWorkload.generate(p, new SplittableRandom(4), 4.0).requests();

        List<String> longTags = rs.stream().filter(r -> r.requestClass().equals("long")).map(ScheduledRequest::tag).toList();
        assertThat(longTags).hasSize(6 * p.samples());
        assertThat(p.samples()).isGreaterThanOrEqualTo(5); // >= 5 samples per (phase, size) cell
        for (String cell : List.of("idle-55k", "idle-90k", "idle-125k", "loaded-55k", "loaded-90k", "loaded-125k")) {
            assertThat(longTags.stream().filter(cell::equals)).hasSize(p.samples());
        }
        // loaded rounds send every size together (1 ms apart), so they queue behind each other
        List<Long> loadedSends = rs.stream().filter(r -> r.tag().startsWith("loaded"))
                .map(ScheduledRequest::sendAtNanosFromStart).toList();
        assertThat(loadedSends.get(2) - loadedSends.get(0)).isEqualTo(2 * MS);
        assertThat(loadedSends.get(3) - loadedSends.get(0)).isEqualTo(p.loadedRoundGapMillis() * MS);
        assertThat(rs.stream().filter(r -> r.requestClass().equals("background"))).hasSize(8);
        assertThat(promptChars(rs.stream().filter(r -> r.tag().equals("idle-125k")).findFirst().orElseThrow()))
                .isEqualTo(125_000 * 4);
        long firstLoaded = rs.stream().filter(r -> r.tag().startsWith("loaded")).mapToLong(ScheduledRequest::sendAtNanosFromStart).min().orElseThrow();
        long lastBackgroundStart = rs.stream().filter(r -> r.tag().equals("background")).mapToLong(ScheduledRequest::sendAtNanosFromStart).max().orElseThrow();
        assertThat(firstLoaded).isGreaterThan(lastBackgroundStart);
    }

    @Test
    void compressedBy_dividesSendTimesByTheTimeScale() {
        ScheduledRequest r = new ScheduledRequest(100 * MS, "/p", new byte[0], "short", "t");

        assertThat(r.compressedBy(4).sendAtNanosFromStart()).isEqualTo(25 * MS);
        assertThat(r.compressedBy(4).tag()).isEqualTo("t");
    }
}
