package io.kvroute.it.resilience;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Generates malformed requests for the fuzz tests: truncated JSON, wrong types, huge numbers,
 * deep nesting, invalid UTF-8, oversized bodies, absurd token budgets. Every generated body is
 * invalid for the endpoint it targets (no case can be accidentally valid), so every answer must be
 * a 4xx. Deterministic for a given random generator.
 */
final class MalformedRequests {

    /** One request to send: {@code label} says which generator made it, for failure messages. */
    record Case(String label, String method, String path, String contentType, byte[] body) {
        String describe() {
            String text = body == null ? "" : new String(body, 0, Math.min(body.length, 160), StandardCharsets.UTF_8);
            return label + " " + method + " " + path + " " + contentType + " " + text;
        }
    }

    static final String CHAT = "/v1/chat/completions";
    static final String COMPLETIONS = "/v1/completions";
    static final String GENERATE = "/generate";
    static final List<String> INFERENCE = List.of(CHAT, COMPLETIONS, GENERATE);

    /** Bytes no UTF-8 decoder may accept: a bare continuation byte, 0xFE/0xFF, a lead byte without continuation. */
    private static final byte[][] INVALID_UTF8 = {
        {(byte) 0x80}, {(byte) 0xFF}, {(byte) 0xFE}, {(byte) 0xC3, 'A'}, {(byte) 0xE2, (byte) 0x82, 'x'}, {(byte) 0xBF, (byte) 0xBF},
        {(byte) 0xF8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80},
    };

    /** Token budgets no endpoint accepts: negative, beyond 10^7, beyond long, fractional, not numbers. */
    static final List<String> ABSURD_BUDGETS = List.of("-1", "-9999999999", "10000001", "2147483648", "9223372036854775807",
            "99999999999999999999999999", "1e300", "-1e300", "1.5", "0.0001", "\"100\"", "true", "[]", "{}", "[16]",
            "1" + "0".repeat(400));

    private final RandomGenerator random;

    MalformedRequests(RandomGenerator random) {
        this.random = random;
    }

    /** A valid body for {@code path} carrying {@code extra} (a JSON fragment of members, may be empty). */
    static String valid(String path, String extra) {
        String sep = extra.isEmpty() ? "" : ",";
        return switch (path) {
            case CHAT -> "{\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],\"max_tokens\":2" + sep + extra + "}";
            case COMPLETIONS -> "{\"prompt\":\"once upon a time\",\"max_tokens\":2" + sep + extra + "}";
            default -> "{\"text\":\"hello\",\"sampling_params\":{\"max_new_tokens\":2}" + sep + extra + "}";
        };
    }

    private String anyInference() {
        return INFERENCE.get(random.nextInt(INFERENCE.size()));
    }

    private static Case post(String label, String path, String body) {
        return new Case(label, "POST", path, "application/json", body.getBytes(StandardCharsets.UTF_8));
    }

    Case truncated() {
        String path = anyInference();
        String body = valid(path, random.nextBoolean() ? "\"stream\":" + random.nextBoolean() : "");
        return post("truncated", path, body.substring(0, random.nextInt(body.length())));
    }

    Case wrongType() {
        String path = anyInference();
        List<String> bad = new ArrayList<>(List.of("\"model\":1", "\"model\":[\"mock-model\"]", "\"model\":{}", "\"stream\":\"yes\"",
                "\"stream\":1", "\"stream\":[]", "\"stream\":{\"on\":true}"));
        if (!path.equals(GENERATE)) {
            bad.add("\"max_tokens\":\"10\"");
        }
        switch (path) {
            case CHAT -> {
                String[] messages = {"\"x\"", "1", "{}", "[]", "[1]", "[\"hi\"]", "[{\"content\":\"no role\"}]", "[{\"role\":7}]",
                    "null", "true", "[[{\"role\":\"user\"}]]"};
                return post("wrong-type", path, "{\"messages\":" + messages[random.nextInt(messages.length)] + "}");
            }
            case COMPLETIONS -> {
                if (random.nextBoolean()) {
                    String[] prompts = {"1", "{}", "true", "null", "1.5"};
                    return post("wrong-type", path, "{\"prompt\":" + prompts[random.nextInt(prompts.length)] + "}");
                }
            }
            default -> {
                if (random.nextBoolean()) {
                    String[] bodies = {"{\"text\":1}", "{\"text\":{}}", "{\"text\":true}", "{\"input_ids\":\"1 2 3\"}",
                        "{\"input_ids\":5}", "{\"input_ids\":{}}", "{\"sampling_params\":{}}", "{}",
                        "{\"text\":\"a\",\"sampling_params\":1}", "{\"text\":\"a\",\"sampling_params\":\"fast\"}",
                        "{\"text\":\"a\",\"sampling_params\":[]}", "{\"text\":null}"};
                    return post("wrong-type", path, bodies[random.nextInt(bodies.length)]);
                }
            }
        }
        return post("wrong-type", path, valid(path, bad.get(random.nextInt(bad.size()))));
    }

    Case absurdBudget() {
        String path = anyInference();
        String budget = ABSURD_BUDGETS.get(random.nextInt(ABSURD_BUDGETS.size()));
        return switch (path) {
            case CHAT -> post("absurd-budget", path, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\""
                    + (random.nextBoolean() ? "max_tokens" : "max_completion_tokens") + "\":" + budget + "}");
            case COMPLETIONS -> post("absurd-budget", path, "{\"prompt\":\"x\",\"max_tokens\":" + budget + "}");
            default -> post("absurd-budget", path, "{\"text\":\"x\",\"sampling_params\":{\"max_new_tokens\":" + budget + "}}");
        };
    }

    /** A number longer than Jackson's 1,000-character limit, anywhere in the body. */
    Case hugeNumber() {
        String path = anyInference();
        String digits = "9".repeat(1_001 + random.nextInt(20_000));
        String field = random.nextBoolean() ? "temperature" : "seed";
        return post("huge-number", path, valid(path, "\"" + field + "\":" + (random.nextBoolean() ? "-" : "") + digits));
    }

    /** Nesting deeper than Jackson's 1,000-level limit, anywhere in the body. */
    Case deepNesting() {
        String path = anyInference();
        int depth = 1_001 + random.nextInt(5_000);
        boolean arrays = random.nextBoolean();
        StringBuilder nested = new StringBuilder();
        for (int i = 0; i < depth; i++) {
            nested.append(arrays ? "[" : "{\"a\":");
        }
        nested.append("1");
        for (int i = 0; i < depth; i++) {
            nested.append(arrays ? "]" : "}");
        }
        return post("deep-nesting", path, valid(path, "\"extra\":" + nested));
    }

    Case invalidUtf8() {
        String path = anyInference();
        String body = valid(path, "\"user\":\"abcdef\"");
        int at = body.indexOf("abcdef") + random.nextInt(6);
        byte[] bad = INVALID_UTF8[random.nextInt(INVALID_UTF8.length)];
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] prefix = body.substring(0, at).getBytes(StandardCharsets.UTF_8);
        byte[] suffix = body.substring(at).getBytes(StandardCharsets.UTF_8);
        out.write(prefix, 0, prefix.length);
        out.write(bad, 0, bad.length);
        out.write(suffix, 0, suffix.length);
        return new Case("invalid-utf8", "POST", path, "application/json", out.toByteArray());
    }

    Case oversized(int maxBodyBytes) {
        String path = anyInference();
        String filler = "x".repeat(maxBodyBytes + 1 + random.nextInt(maxBodyBytes));
        return post("oversized", path, valid(path, "\"user\":\"" + filler + "\""));
    }

    Case wrongContentType() {
        String path = anyInference();
        String[] types = {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml",
            "image/png"};
        return new Case("content-type", "POST", path, types[random.nextInt(types.length)],
                valid(path, "").getBytes(StandardCharsets.UTF_8));
    }

    /** A non-POST method on an inference endpoint, or a non-GET one on a read-only endpoint. */
    Case wrongMethod(List<String> readOnlyPaths) {
        if (random.nextBoolean()) {
            String[] methods = {"GET", "PUT", "DELETE", "PATCH", "OPTIONS"};
            return new Case("wrong-method", methods[random.nextInt(methods.length)], anyInference(), null, null);
        }
        String[] methods = {"POST", "PUT", "DELETE", "PATCH"};
        return new Case("wrong-method", methods[random.nextInt(methods.length)],
                readOnlyPaths.get(random.nextInt(readOnlyPaths.size())), "application/json", "{}".getBytes(StandardCharsets.UTF_8));
    }

    /** Not JSON at all, or JSON that is not an object. */
    Case notAnObject() {
        String[] bodies = {"", " ", "null", "[]", "[{\"messages\":[]}]", "\"text\"", "42", "true", "{{}}", "{\"a\" 1}", "{'a':1}",
            "{\"a\":1,}", "{\"a\":1}{\"b\":2}", "<xml/>", "\u0000"};
        return post("not-an-object", anyInference(), bodies[random.nextInt(bodies.length)]);
    }
}
