package io.kvroute.scheduler.report;

import io.kvroute.protocol.LoadStat;
import io.kvroute.protocol.LoadStatWire;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The encoder's bytes must equal the golden files the router's decoder tests read. Run with
 * {@code -Dkvroute.regenerateLoadVectors=true} (from the module directory) to rewrite the files
 * after a deliberate format change, then review the diff.
 */
class GoldenLoadVectorsTest {
    private static final Path DIR = Path.of("src/test/resources/load-vectors");

    @Test
    void encoder_producesExactlyTheGoldenBytes() throws IOException {
        List<GoldenLoadVectors.Vector> vectors = GoldenLoadVectors.all();
        String index = vectors.stream().map(GoldenLoadVectors.Vector::name).collect(Collectors.joining("\n", "", "\n"));
        if (Boolean.getBoolean("kvroute.regenerateLoadVectors")) {
            Files.createDirectories(DIR);
            Files.writeString(DIR.resolve("index.txt"), index);
            for (GoldenLoadVectors.Vector v : vectors) {
                Files.write(DIR.resolve(v.name() + ".msgpack"), v.payload());
                Files.writeString(DIR.resolve(v.name() + ".properties"), v.properties());
            }
        }
        assertThat(resource("index.txt")).asString(StandardCharsets.UTF_8).isEqualTo(index);
        for (GoldenLoadVectors.Vector v : vectors) {
            assertThat(resource(v.name() + ".msgpack")).as(v.name()).isEqualTo(v.payload());
            assertThat(new String(resource(v.name() + ".properties"), StandardCharsets.UTF_8))
                    .as(v.name()).isEqualTo(v.properties());
        }
    }

    @Test
    void encoder_matchesHandAssembledBytesForTheBaseForm() {
        // ["LoadStat", 12, 3, 48213, 0, 1]: fixarray(6), fixstr(8) "LoadStat", positive fixints,
        // uint16 0xbc55 for 48213.
        byte[] expected = java.util.HexFormat.of().parseHex("96a84c6f616453746174" + "0c" + "03" + "cdbc55" + "00" + "01");
        assertThat(LoadStatWire.payload(LoadStat.base(12, 3, 48213, 0, 1))).isEqualTo(expected);
        assertThat(LoadStatWire.seqFrame(1)).containsExactly(0, 0, 0, 0, 0, 0, 0, 1);
    }

    /** Bytes written by hand from the msgpack spec (not by this encoder) must equal the encoder's. */
    @Test
    void encoder_producesTheHandWrittenBytes() {
        int compared = 0;
        for (HandLoadVectors.Vector v : HandLoadVectors.all()) {
            String spec = v.expected().get("encoder");
            if (spec == null) {
                continue;
            }
            String[] kindAndValues = spec.split(":");
            long[] f = java.util.Arrays.stream(kindAndValues[1].split(",")).mapToLong(Long::parseLong).toArray();
            LoadStat stat = kindAndValues[0].equals("ext")
                    ? new LoadStat((int) f[0], (int) f[1], f[2], f[3], (int) f[4],
                            new LoadStat.Extension(f[5], f[6], (int) f[7], f[8], f[9]))
                    : LoadStat.base((int) f[0], (int) f[1], f[2], f[3], (int) f[4]);
            assertThat(java.util.HexFormat.of().formatHex(LoadStatWire.payload(stat))).as(v.name())
                    .isEqualTo(java.util.HexFormat.of().formatHex(v.payload()));
            compared++;
        }
        assertThat(compared).isGreaterThanOrEqualTo(3);
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = GoldenLoadVectorsTest.class.getResourceAsStream("/load-vectors/" + name)) {
            assertThat(in).as("classpath resource /load-vectors/" + name).isNotNull();
            return in.readAllBytes();
        }
    }
}
