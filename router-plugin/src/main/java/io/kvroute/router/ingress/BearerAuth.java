package io.kvroute.router.ingress;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Bearer-token checks in constant time. Both sides are hashed with SHA-256 first, so neither the
 * content nor the length of the configured key leaks through timing; the token is never logged.
 * Takes the {@code Authorization} header's value, so every adapter (and the admin API) checks keys the same way.
 */
public final class BearerAuth {

    private final byte[] expectedDigest;

    private BearerAuth(String key) {
        this.expectedDigest = sha256(key);
    }

    /** Null when {@code key} is null (the protected surface is then open or disabled by the caller). */
    public static BearerAuth of(String key) {
        return key == null ? null : new BearerAuth(key);
    }

    /** {@code header} is the Authorization header's value, or null. */
    public boolean accepts(String header) {
        String token = "";
        if (header != null && header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            token = header.substring(7).trim();
        }
        return MessageDigest.isEqual(expectedDigest, sha256(token));
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }
}
