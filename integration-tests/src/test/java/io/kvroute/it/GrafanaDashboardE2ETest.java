package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard cannot silently rot: a router serves traffic over every path the dashboard
 * shows (plain, streaming, cache-aware, a worker answering 503 until retries run out and its breaker
 * opens, PD with continuations), and every metric name and matcher label the dashboard's PromQL uses
 * must exist in that router's {@code /metrics}.
 */
class GrafanaDashboardE2ETest {

    private static final Path DASHBOARD = Path.of("..", "docs", "grafana", "kvroute-dashboard.json");
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? ");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");
    /** Labels Prometheus adds at scrape time, not present in the exposition. */
    private static final Set<String> TARGET_LABELS = Set.of("instance", "job");

    private static ObservabilityFleet fleet;
    private static Http http;
    private static Map<String, Set<String>> scraped;

    @BeforeAll
    static void serveTraffic() throws Exception {
        fleet = ObservabilityFleet.start(List.of());
        http = new Http();
        for (int i = 0; i < 4; i++) {
            String text = "tenant " + (i % 2) + " shared system prompt, question " + i;
            assertThat(http.postJson(fleet.url("/v1/chat/completions"),
                    ObservabilityFleet.chat(ObservabilityFleet.MODEL, text, 4, false)).getStatus()).isEqualTo(200);
            assertThat(http.stream(fleet.url("/v1/chat/completions"),
                    ObservabilityFleet.chat(ObservabilityFleet.MODEL, text, 4, true)).get().status()).isEqualTo(200);
            assertThat(http.postJson(fleet.url("/v1/completions"),
                    ObservabilityFleet.completion(ObservabilityFleet.MODEL, text, 4)).getStatus()).isEqualTo(200);
        }
        // PD: 12 tokens in segments of 5 -> two continuations per request
        assertThat(http.stream(fleet.url("/v1/chat/completions"),
                ObservabilityFleet.chat(ObservabilityFleet.PD_MODEL, "pd question", 12, true)).get().status()).isEqualTo(200);
        assertThat(http.postJson(fleet.url("/v1/completions"),
                ObservabilityFleet.completion(ObservabilityFleet.PD_MODEL, "pd prompt", 12)).getStatus()).isEqualTo(200);
        // the failing worker: each request retries and exhausts its attempts; 4 failures open the breaker
        for (int i = 0; i < 2; i++) {
            assertThat(http.postJson(fleet.url("/v1/completions"),
                    ObservabilityFleet.completion(ObservabilityFleet.BROKEN_MODEL, "doomed " + i, 4)).getStatus()).isEqualTo(503);
        }
        scraped = scrape(http.get(fleet.url("/metrics")).getContentAsString());
        // the Tenants and QoS row: a router with a tenants file and the router-side queue
        Path tenants = Files.createTempFile("tenants", ".yaml");
        Files.writeString(tenants, TenantsE2ETest.TENANTS);
        try (TestFleet qos = TestFleet.start(1, List.of(), List.of("--tenants-file", tenants.toString(),
                "--qos-worker-capacity-tokens", "1000"))) {
            var request = http.client.newRequest(qos.url("/v1/chat/completions"))
                    .method(org.eclipse.jetty.http.HttpMethod.POST)
                    .headers(h -> h.put("Authorization", "Bearer sk-chat"))
                    .body(new org.eclipse.jetty.client.StringRequestContent("application/json",
                            "{\"model\":\"mock-model\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
            assertThat(request.send().getStatus()).isEqualTo(200);
            scrape(http.get(qos.url("/metrics")).getContentAsString())
                    .forEach((name, labels) -> scraped.computeIfAbsent(name, k -> new HashSet<>()).addAll(labels));
        } finally {
            Files.deleteIfExists(tenants);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (http != null) {
            http.close();
        }
        if (fleet != null) {
            fleet.close();
        }
    }

    @Test
    void everyMetricAndMatcherLabelInTheDashboard_existsInTheRoutersScrape() throws Exception {
        List<String> exprs = expressions(new ObjectMapper().readTree(Files.readString(DASHBOARD)));
        assertThat(exprs).hasSizeGreaterThan(30);
        List<String> problems = problems(exprs, scraped);
        assertThat(problems).as("dashboard PromQL against the live scrape").isEmpty();
    }

    /** The LoRA row shows every LoRA meter (docs/lora.md "Metrics"); the test above checks the names exist. */
    @Test
    void loraRow_showsEveryLoraMeter() throws Exception {
        JsonNode panels = new ObjectMapper().readTree(Files.readString(DASHBOARD)).path("panels");
        List<String> metrics = new ArrayList<>();
        boolean inRow = false;
        for (JsonNode panel : panels) {
            if (panel.path("type").asText().equals("row")) {
                inRow = panel.path("title").asText().equals("LoRA adapters");
                continue;
            }
            if (inRow) {
                for (JsonNode target : panel.path("targets")) {
                    PromQlNames.selectors(target.path("expr").asText()).forEach(sel -> metrics.add(sel.metric()));
                }
            }
        }
        assertThat(metrics).contains("kvroute_lora_decisions_total", "kvroute_lora_loads_total",
                "kvroute_lora_load_seconds_sum", "kvroute_lora_load_seconds_count", "kvroute_lora_load_seconds_max");
    }

    @Test
    void aBogusMetricName_orLabel_isReported() {
        List<String> problems = problems(List.of(
                "sum(rate(kvroute_requests_total{endpoint=\"/v1/completions\"}[5m]))",
                "sum(rate(kvroute_request_totals[5m]))",
                "histogram_quantile(0.9, sum by (le) (rate(kvroute_time_to_first_byte_seconds[5m])))",
                "sum(rate(kvroute_retries_total{reason=\"x\"}[$__rate_interval]))"), scraped);
        assertThat(problems).containsExactly(
                "kvroute_request_totals: not in /metrics",
                "kvroute_time_to_first_byte_seconds: not in /metrics",
                "kvroute_retries_total: no label 'reason'");
    }

    @Test
    void lexer_separatesFunctionsKeywordsAndLabelsFromMetricNames() {
        List<PromQlNames.Selector> selectors = PromQlNames.selectors(
                "histogram_quantile(0.99, sum by (le, endpoint) (rate(a_bucket{instance=~\"$instance\",x!=\"y(\"}[5m] offset 1h)))"
                        + " / on (endpoint) group_left (z) b_count + sum without (w) (c) > bool 3");
        assertThat(selectors).extracting(PromQlNames.Selector::metric).containsExactly("a_bucket", "b_count", "c");
        assertThat(selectors.get(0).labels()).containsExactly("instance", "x");
    }

    /** Every PromQL expr in panels (rows included) and every label_values() metric in the variables. */
    static List<String> expressions(JsonNode dashboard) {
        List<String> exprs = new ArrayList<>();
        collect(dashboard.path("panels"), exprs);
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            String query = variable.path("query").isObject() ? variable.path("query").path("query").asText()
                    : variable.path("query").asText();
            Matcher m = Pattern.compile("label_values\\(\\s*([^,)]+)").matcher(query);
            if (m.find()) {
                exprs.add(m.group(1).trim());
            }
        }
        return exprs;
    }

    private static void collect(JsonNode panels, List<String> exprs) {
        for (JsonNode panel : panels) {
            for (JsonNode target : panel.path("targets")) {
                exprs.add(target.path("expr").asText());
            }
            collect(panel.path("panels"), exprs);
        }
    }

    static List<String> problems(List<String> exprs, Map<String, Set<String>> scraped) {
        List<String> problems = new ArrayList<>();
        for (String expr : exprs) {
            List<PromQlNames.Selector> selectors = PromQlNames.selectors(expr);
            if (selectors.isEmpty()) {
                problems.add("no metric in: " + expr);
            }
            for (PromQlNames.Selector s : selectors) {
                Set<String> labels = scraped.get(s.metric());
                if (labels == null) {
                    problems.add(s.metric() + ": not in /metrics");
                    continue;
                }
                for (String label : s.labels()) {
                    if (!TARGET_LABELS.contains(label) && !labels.contains(label)) {
                        problems.add(s.metric() + ": no label '" + label + "'");
                    }
                }
            }
        }
        return problems;
    }

    /** Sample name to the union of its label names, from the text exposition. */
    static Map<String, Set<String>> scrape(String text) {
        Map<String, Set<String>> out = new HashMap<>();
        for (String line : PrometheusText.parse(text)) {
            Matcher m = SAMPLE.matcher(line);
            if (!m.find()) {
                continue;
            }
            Set<String> labels = out.computeIfAbsent(m.group(1), k -> new HashSet<>());
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.add(l.group(1));
                }
            }
        }
        return out;
    }
}
