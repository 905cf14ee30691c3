package io.kvroute.bench.workload;

import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Builds prompt text of a controllable token length out of random lowercase ASCII words. The mock
 * worker's stand-in tokenizer (and, roughly, the Qwen3 tokenizer on such text) counts about one token
 * per {@code charsPerToken} characters, so a prompt of {@code n} tokens is {@code round(n x
 * charsPerToken)} characters. Words are drawn fresh from the injected generator, so two prompts
 * share a prefix only when a caller reuses text on purpose (tenants' shared prefixes, chat history).
 *
 * <p>Not thread-safe (the generator is not); deterministic for a given generator state.
 */
public final class PromptBuilder {

    /** Shortest and longest random word, in letters. */
    private static final int MIN_WORD_LETTERS = 2;
    private static final int MAX_WORD_LETTERS = 9;

    private final RandomGenerator random;
    private final double charsPerToken;

    public PromptBuilder(RandomGenerator random, double charsPerToken) {
        this.random = Objects.requireNonNull(random, "random");
        if (!(charsPerToken > 0)) {
            throw new IllegalArgumentException("charsPerToken must be > 0: " + charsPerToken);
        }
        this.charsPerToken = charsPerToken;
    }

    public double charsPerToken() {
        return charsPerToken;
    }

    /** Text of exactly {@code round(targetTokens x charsPerToken)} characters (words separated by spaces). */
    public String text(int targetTokens) {
        if (targetTokens < 0) {
            throw new IllegalArgumentException("targetTokens must be >= 0: " + targetTokens);
        }
        int targetChars = (int) Math.round(targetTokens * charsPerToken);
        StringBuilder text = new StringBuilder(targetChars + MAX_WORD_LETTERS + 1);
        while (text.length() < targetChars) {
            if (!text.isEmpty()) {
                text.append(' ');
            }
            int letters = random.nextInt(MIN_WORD_LETTERS, MAX_WORD_LETTERS + 1);
            for (int i = 0; i < letters; i++) {
                text.append((char) ('a' + random.nextInt(26)));
            }
        }
        text.setLength(targetChars);
        if (targetChars > 0 && text.charAt(targetChars - 1) == ' ') {
            text.setCharAt(targetChars - 1, 'x'); // no trailing space: some tokenizers merge it away
        }
        return text.toString();
    }
}
