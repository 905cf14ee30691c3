package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenizerArchiveTest {

    @Test
    void materialize_unpacksTokenizerAndConfigIntoTargetDir(@TempDir Path tmp) throws IOException {
        Path target = tmp.resolve("nested/qwen3");
        Path out = TokenizerArchive.materialize(getClass().getClassLoader(), "/models/qwen3/", target);
        assertThat(out).isEqualTo(target);
        ObjectMapper json = new ObjectMapper();
        assertThat(json.readTree(target.resolve("tokenizer.json").toFile()).path("model").path("type").asText()).isEqualTo("BPE");
        assertThat(json.readTree(target.resolve("tokenizer_config.json").toFile()).path("chat_template").asText())
                .contains("<|im_start|>");
        try (var files = Files.list(target)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("tokenizer.json", "tokenizer_config.json");
        }
    }

    @Test
    void materialize_isRepeatableIntoTheSameDir(@TempDir Path tmp) throws IOException {
        TokenizerArchive.materialize(getClass().getClassLoader(), "models/qwen3", tmp);
        long size = Files.size(tmp.resolve("tokenizer.json"));
        TokenizerArchive.materialize(getClass().getClassLoader(), "models/qwen3", tmp);
        assertThat(Files.size(tmp.resolve("tokenizer.json"))).isEqualTo(size);
    }

    @Test
    void materialize_namesTheMissingResource(@TempDir Path tmp) {
        assertThatThrownBy(() -> TokenizerArchive.materialize(getClass().getClassLoader(), "models/nope", tmp))
                .isInstanceOf(FileNotFoundException.class).hasMessageContaining("models/nope/tokenizer.json.gz");
    }
}
