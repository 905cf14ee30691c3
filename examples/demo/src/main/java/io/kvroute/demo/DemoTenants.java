package io.kvroute.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.eclipse.jetty.http.HttpFields;

/**
 * The demo's tenants: tenant {@code i} calls with API key {@code demo-key-i}; tenant 0 is a chat
 * product allowed the {@code interactive} class and asks for it, the others run in {@code default}.
 * The router reads them from a tenants file (docs/tenants.md) that stores only the keys' SHA-256.
 */
final class DemoTenants {

    private DemoTenants() {}

    /** Writes the tenants file for {@code tenants} tenants to a temporary file. */
    static Path write(int tenants) throws IOException {
        StringBuilder yaml = new StringBuilder("tenants:\n");
        for (int t = 0; t < tenants; t++) {
            yaml.append("  - name: tenant-").append(t).append('\n')
                    .append("    api_key_sha256: ").append(sha256("demo-key-" + t)).append('\n')
                    .append("    max_class: ").append(t == 0 ? "interactive" : "default").append('\n');
        }
        Path file = Files.createTempFile("kvroute-demo-tenants-", ".yaml");
        file.toFile().deleteOnExit();
        Files.writeString(file, yaml);
        return file;
    }

    /** Tenant {@code t}'s key, and its class ask (tenant 0 asks for interactive). */
    static void sign(HttpFields.Mutable headers, int tenant) {
        headers.put("Authorization", "Bearer demo-key-" + tenant);
        if (tenant == 0) {
            headers.put("x-kvroute-priority", "interactive");
        }
    }

    static String label(int tenant) {
        return "tenant-" + tenant + (tenant == 0 ? " (interactive)" : " (default)");
    }

    static String describe() {
        return "tenant-0 interactive, the others default";
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }
}
