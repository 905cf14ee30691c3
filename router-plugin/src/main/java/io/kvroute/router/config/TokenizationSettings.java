package io.kvroute.router.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Tokenization at ingress: which tokenizer directories serve which models, how many bytes of a
 * conversation's earlier turns stay tokenized, and whether the ids may be forwarded as
 * {@code input_ids}. Handed to the tokenizer registry and the ingress tokenization.
 */
public record TokenizationSettings(
        @Setting(name = "tokenizer-path", defaultValue = "",
                description = "Tokenizer directories (tokenizer.json + tokenizer_config.json): DIR for every model, or "
                        + "MODEL=DIR, comma separated or repeated; in a --config file also a mapping MODEL: DIR")
        List<String> tokenizerPaths,
        @Setting(name = "tokenizer-cache-bytes", defaultValue = "67108864", min = 0,
                description = "Per model, bytes of chat-prefix token ids kept so a conversation's earlier turns are not "
                        + "tokenized again (64 MiB; 0 = off)")
        long cacheBytes,
        @Setting(name = "disable-input-ids-forwarding", defaultValue = "false",
                description = "Never forward ingress token ids as input_ids (routing still tokenizes)")
        boolean disableInputIdsForwarding,
        @Setting(name = "tokenizer-threads", defaultValue = "1", min = 1, max = 64,
                description = "Threads that tokenize one chat prompt's message segments at once, the request's own "
                        + "included; extra threads come from one bounded pool per router (1 = off)")
        int threads) {

    public TokenizationSettings {
        tokenizerPaths = List.copyOf(tokenizerPaths);
        for (String entry : tokenizerPaths) {
            int eq = entry.indexOf('=');
            String dir = eq < 0 ? entry : entry.substring(eq + 1);
            if (eq == 0 || dir.isBlank() || !Files.isRegularFile(Path.of(dir).resolve("tokenizer.json"))) {
                throw ConfigValidator.fail("--tokenizer-path", entry, "must be DIR or MODEL=DIR where DIR holds tokenizer.json");
            }
        }
    }

    public static final TokenizationSettings DEFAULTS = SettingsBinder.defaults(TokenizationSettings.class);
}
