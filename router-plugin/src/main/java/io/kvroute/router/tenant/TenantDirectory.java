package io.kvroute.router.tenant;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One validated, immutable view of the tenants: API-key digests to tenants, the class settings and
 * the default output reservation. A reload builds a new directory and publishes it whole; readers
 * keep the one they captured for the rest of a request.
 *
 * <p>Keys are stored as lowercase SHA-256 hex digests only: the file never holds a usable key, and a
 * lookup hashes the presented token once and finds its tenant in a hash map. Unlike a constant-time
 * compare against one key, a map lookup's timing depends on the digest, never on the key itself.
 */
public final class TenantDirectory {

    /** The tenant {@code --api-key} stands for when a tenants file is also given. */
    public static final String API_KEY_TENANT = "api-key";

    private final Map<String, TenantSpec> byDigest;
    private final Map<String, TenantSpec> byName;
    private final Map<PriorityClass, ClassSpec> classes;
    private final long defaultOutputTokens;

    TenantDirectory(Map<String, TenantSpec> byDigest, Map<String, TenantSpec> byName,
            Map<PriorityClass, ClassSpec> classes, long defaultOutputTokens) {
        this.byDigest = Collections.unmodifiableMap(new LinkedHashMap<>(byDigest));
        this.byName = Collections.unmodifiableMap(new LinkedHashMap<>(byName));
        EnumMap<PriorityClass, ClassSpec> all = new EnumMap<>(PriorityClass.class);
        for (PriorityClass c : PriorityClass.values()) {
            all.put(c, classes.getOrDefault(c, ClassSpec.defaultFor(c)));
        }
        this.classes = Collections.unmodifiableMap(all);
        this.defaultOutputTokens = defaultOutputTokens;
    }

    /** A directory with only the built-in class defaults and no tenant. */
    public static TenantDirectory empty() {
        return new TenantDirectory(Map.of(), Map.of(), Map.of(), 256);
    }

    /** This directory plus {@code apiKey} as tenant {@value #API_KEY_TENANT} (unless the file already maps it). */
    public TenantDirectory withApiKey(String apiKey) {
        if (apiKey == null) {
            return this;
        }
        String digest = sha256Hex(apiKey);
        if (byDigest.containsKey(digest)) {
            return this;
        }
        Map<String, TenantSpec> digests = new LinkedHashMap<>(byDigest);
        Map<String, TenantSpec> names = new LinkedHashMap<>(byName);
        TenantSpec spec = names.computeIfAbsent(API_KEY_TENANT, TenantSpec::plain);
        digests.put(digest, spec);
        return new TenantDirectory(digests, names, classes, defaultOutputTokens);
    }

    /** The tenant a bearer token belongs to, or null when it belongs to none. */
    public TenantSpec byKey(String token) {
        return token == null ? null : byDigest.get(sha256Hex(token));
    }

    /** The tenant of that name, or null. */
    public TenantSpec byName(String name) {
        return name == null ? null : byName.get(name);
    }

    public Map<String, TenantSpec> tenants() {
        return byName;
    }

    public ClassSpec classSpec(PriorityClass c) {
        return classes.get(c);
    }

    /** Output tokens reserved (rate limit, tokens in flight) for a request that names no {@code max_tokens}. */
    public long defaultOutputTokens() {
        return defaultOutputTokens;
    }

    public static String sha256Hex(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TenantDirectory d && byDigest.equals(d.byDigest) && byName.equals(d.byName)
                && classes.equals(d.classes) && defaultOutputTokens == d.defaultOutputTokens;
    }

    @Override
    public int hashCode() {
        return Objects.hash(byDigest, byName, classes, defaultOutputTokens);
    }
}
