package io.kvroute.router.tokenize;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * Where a model's chat template starts each message, found from the template itself, for
 * {@link ChatPrefixCache}. A probe conversation (system, then alternating user/assistant turns, plain
 * ASCII) is rendered with no generation prompt for each of its prefixes. The renderings of the first k
 * and the first k+1 messages share a prefix (the prefix property, checked up to the boundary: some
 * templates, Llama 3's among them, always end on the assistant header, so the shorter rendering is not a
 * prefix of the longer as a whole); the last turn marker starting within that shared prefix is where the
 * new message begins, and what precedes it is the same text in both, so a later turn can hit. Only markers that the
 * tokenizer splits at before anything else are kept: added tokens with {@code normalized: false},
 * {@code lstrip: false}, {@code rstrip: false} (from {@code tokenizer.json}) that encode to one id. With
 * such markers cutting the rendered text is exact for every conversation, whatever the template does;
 * the prefix property only decides whether later turns hit.
 *
 * <p>When no probe boundary is safe the result is a decline with a reason label
 * ({@code no_splitting_marker}: no message starts at an added token the tokenizer splits at, e.g. DeepSeek
 * V3's {@code normalized: true} role tokens; {@code marker_not_one_id}); the model then runs without the cache.
 */
final class TurnMarkers {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Found markers (parallel arrays), or why none is safe. */
    record Result(String[] markers, int[] ids, String declineReason) {
        boolean found() {
            return declineReason == null;
        }
    }

    private TurnMarkers() {}

    static Result find(ChatEncoder plainEncoder, Set<String> splittingAddedTokens, Function<String, int[]> encoder) {
        Set<String> markers = new LinkedHashSet<>();
        for (boolean withSystem : new boolean[] {true, false}) {
            List<String> renders = new ArrayList<>();
            ArrayNode probe = JsonNodeFactory.instance.arrayNode();
            if (withSystem) {
                probe.add(message("system", "Be brief."));
            }
            for (int turn = 0; turn < 3; turn++) {
                probe.add(message("user", "Question number " + turn + "?"));
                renders.add(render(plainEncoder, probe));
                probe.add(message("assistant", "Answer number " + turn + "."));
                renders.add(render(plainEncoder, probe));
            }
            for (int k = 0; k + 1 < renders.size(); k++) {
                String shorter = renders.get(k);
                String longer = renders.get(k + 1);
                if (shorter == null || longer == null) {
                    continue;
                }
                String marker = lastMarkerWithin(longer, commonPrefixLength(shorter, longer), splittingAddedTokens);
                if (marker != null) {
                    markers.add(marker);
                }
            }
        }
        if (markers.isEmpty()) {
            return new Result(null, null, "no_splitting_marker");
        }
        List<String> kept = new ArrayList<>();
        List<Integer> ids = new ArrayList<>();
        for (String m : markers) {
            int[] encoded = encoder.apply(m);
            if (encoded.length == 1) {
                kept.add(m);
                ids.add(encoded[0]);
            }
        }
        if (kept.isEmpty()) {
            return new Result(null, null, "marker_not_one_id");
        }
        return new Result(kept.toArray(String[]::new), ids.stream().mapToInt(Integer::intValue).toArray(), null);
    }

    private static String render(ChatEncoder encoder, ArrayNode messages) {
        try {
            return encoder.render(ChatInput.of(messages.deepCopy(), false, true));
        } catch (UnsupportedChatException e) {
            return null; // e.g. a template that refuses a trailing system or user turn: no boundary there
        }
    }

    private static int commonPrefixLength(String a, String b) {
        int n = Math.min(a.length(), b.length());
        int i = 0;
        while (i < n && a.charAt(i) == b.charAt(i)) {
            i++;
        }
        return i;
    }

    /** The token whose last occurrence in {@code text} starting in {@code (0, limit]} is rightmost (longest on ties). */
    private static String lastMarkerWithin(String text, int limit, Set<String> tokens) {
        String best = null;
        int bestAt = 0;
        for (String t : tokens) {
            if (t.isEmpty()) {
                continue;
            }
            int at = text.lastIndexOf(t, limit);
            if (at > 0 && (at > bestAt || (at == bestAt && best != null && t.length() > best.length()))) {
                best = t;
                bestAt = at;
            }
        }
        return best;
    }

    private static JsonNode message(String role, String content) {
        return JsonNodeFactory.instance.objectNode().put("role", role).put("content", content);
    }

    /**
     * The added tokens of a {@code tokenizer.json} that the tokenizer cuts the raw text at before
     * normalizing: {@code normalized: false}, no {@code lstrip}/{@code rstrip}. Streams the file up to its
     * {@code added_tokens} array (near the start) instead of parsing the whole vocabulary.
     */
    static Set<String> splittingAddedTokens(Path tokenizerJson) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        try (JsonParser p = JSON.getFactory().createParser(tokenizerJson.toFile())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return out;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                p.nextToken();
                if (!"added_tokens".equals(field)) {
                    p.skipChildren();
                    continue;
                }
                JsonNode tokens = JSON.readTree(p);
                for (JsonNode t : tokens) {
                    if (t.path("content").isTextual() && !t.path("normalized").asBoolean(true)
                            && !t.path("lstrip").asBoolean(false) && !t.path("rstrip").asBoolean(false)) {
                        out.add(t.get("content").textValue());
                    }
                }
                return out;
            }
        }
        return out;
    }
}
