package io.kvroute.router.worker;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which {@link KvEventsTemplate} applies to which worker: a per-URL template
 * ({@code --kv-events-worker-templates URL=TEMPLATE}) wins over the fleet's default
 * ({@code --kv-events-template}); a discovered pod's annotation ({@code --kv-events-annotation},
 * default {@value #DEFAULT_ANNOTATION}) wins over the default too. A worker whose {@code /server_info}
 * advertises a {@code kv_events} block uses that instead (discovery replaces the template's advert).
 * Immutable; thread-safe.
 *
 * @param defaultTemplate the template of every worker without its own, or null
 * @param byUrl per-URL templates, keyed by the normalized worker URL
 */
public record KvEventsTemplates(KvEventsTemplate defaultTemplate, Map<String, KvEventsTemplate> byUrl) {

    /** The pod annotation that holds a discovered worker's template. */
    public static final String DEFAULT_ANNOTATION = "kvroute.io/kv-events";

    public static final KvEventsTemplates NONE = new KvEventsTemplates(null, Map.of());

    public KvEventsTemplates {
        byUrl = Map.copyOf(Objects.requireNonNull(byUrl, "byUrl"));
    }

    /**
     * Parses the flags' values: {@code defaultText} (null or blank = none) and {@code URL=TEMPLATE}
     * entries. Throws {@link IllegalArgumentException} naming the entry it cannot use.
     */
    public static KvEventsTemplates parse(String defaultText, List<String> perUrl) {
        KvEventsTemplate fallback = defaultText == null || defaultText.isBlank() ? null : KvEventsTemplate.parse(defaultText);
        Map<String, KvEventsTemplate> byUrl = new LinkedHashMap<>();
        for (String entry : perUrl == null ? List.<String>of() : perUrl) {
            if (entry.isBlank()) {
                continue;
            }
            int eq = entry.indexOf('=');
            String url = eq < 0 ? "" : Worker.normalizeUrl(entry.substring(0, eq));
            if (!url.startsWith("http://") && !url.startsWith("https://")) {
                throw new IllegalArgumentException("'" + entry + "' is not URL=TEMPLATE with an http(s) worker URL");
            }
            KvEventsTemplate template;
            try {
                template = KvEventsTemplate.parse(entry.substring(eq + 1));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(url + ": " + e.getMessage(), e);
            }
            if (byUrl.put(url, template) != null) {
                throw new IllegalArgumentException(url + " has two templates");
            }
        }
        return new KvEventsTemplates(fallback, byUrl);
    }

    /** The template of the worker at {@code url}: its own, else the default, else null. */
    public KvEventsTemplate forUrl(String url) {
        KvEventsTemplate own = byUrl.get(Worker.normalizeUrl(url));
        return own != null ? own : defaultTemplate;
    }

    /** {@code worker} with its template's advert, or unchanged when no template applies. */
    public Worker apply(Worker worker) {
        KvEventsTemplate t = forUrl(worker.url());
        return t == null ? worker : worker.withKvEvents(t.advert());
    }
}
