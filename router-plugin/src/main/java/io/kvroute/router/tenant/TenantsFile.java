package io.kvroute.router.tenant;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads and validates a tenants file (YAML; format in docs/tenants.md) into a {@link TenantDirectory}.
 * Every failure is a {@link TenantsFileException} naming the field and the value; unknown fields are
 * errors too, so a misspelt limit never silently means "unlimited".
 */
public final class TenantsFile {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Pattern HEX64 = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    /** Bounds the tenants one file may declare (the fair queue and the metrics stay bounded). */
    static final int MAX_TENANTS = 100_000;
    /** Bounds a weight: service ratios beyond this are not meaningful. */
    static final double MAX_WEIGHT = 1_000_000;
    /** Bounds a rate limit and the default output reservation. */
    static final long MAX_PER_MINUTE = 1L << 40;

    private static final Set<String> TOP = Set.of("tenants", "classes", "default_output_tokens");
    private static final Set<String> TENANT = Set.of("name", "api_key_sha256", "api_keys_sha256", "weight", "max_class",
            "requests_per_minute", "tokens_per_minute");
    private static final Set<String> CLASS = Set.of("reserved_floor_tokens", "reserved_share", "queue_cap",
            "queue_timeout_ms", "starvation_ms", "can_preempt");

    private TenantsFile() {}

    /** A failure naming what in the file is wrong. */
    public static final class TenantsFileException extends Exception {
        private static final long serialVersionUID = 1L;

        TenantsFileException(String message) {
            super(message);
        }
    }

    public static TenantDirectory read(Path path) throws TenantsFileException {
        String text;
        try {
            text = Files.readString(path);
        } catch (IOException e) {
            throw new TenantsFileException("cannot read tenants file " + path + ": " + e.getMessage());
        }
        return parse(text);
    }

    public static TenantDirectory parse(String yaml) throws TenantsFileException {
        JsonNode root;
        try {
            root = YAML.readTree(yaml);
        } catch (IOException e) {
            throw new TenantsFileException("tenants file is not valid YAML: " + e.getMessage());
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            root = YAML.createObjectNode();
        }
        if (!root.isObject()) {
            throw new TenantsFileException("tenants file must be a mapping with 'tenants' and 'classes'");
        }
        unknownFields(root, TOP, "");
        Map<String, TenantSpec> byDigest = new LinkedHashMap<>();
        Map<String, TenantSpec> byName = new LinkedHashMap<>();
        JsonNode tenants = root.path("tenants");
        if (!tenants.isMissingNode() && !tenants.isNull()) {
            if (!tenants.isArray()) {
                throw new TenantsFileException("'tenants' must be a list");
            }
            if (tenants.size() > MAX_TENANTS) {
                throw new TenantsFileException("'tenants' lists " + tenants.size() + " tenants; at most " + MAX_TENANTS);
            }
            for (int i = 0; i < tenants.size(); i++) {
                tenant(tenants.get(i), "tenants[" + i + "]", byDigest, byName);
            }
        }
        Map<PriorityClass, ClassSpec> classes = new EnumMap<>(PriorityClass.class);
        JsonNode classNode = root.path("classes");
        if (!classNode.isMissingNode() && !classNode.isNull()) {
            if (!classNode.isObject()) {
                throw new TenantsFileException("'classes' must be a mapping from class name to settings");
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = classNode.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                PriorityClass c = PriorityClass.parse(e.getKey());
                if (c == null) {
                    throw new TenantsFileException("classes." + e.getKey() + ": unknown class (one of system, interactive,"
                            + " default, batch)");
                }
                classes.put(c, classSpec(e.getValue(), "classes." + e.getKey(), ClassSpec.defaultFor(c)));
            }
        }
        long defaultOutput = longField(root, "default_output_tokens", "", 256, 1, MAX_PER_MINUTE);
        return new TenantDirectory(byDigest, byName, classes, defaultOutput);
    }

    private static void tenant(JsonNode node, String at, Map<String, TenantSpec> byDigest,
            Map<String, TenantSpec> byName) throws TenantsFileException {
        if (!node.isObject()) {
            throw new TenantsFileException(at + " must be a mapping");
        }
        unknownFields(node, TENANT, at + ".");
        String name = node.path("name").isTextual() ? node.path("name").asText() : null;
        if (name == null || !NAME.matcher(name).matches()) {
            throw new TenantsFileException(at + ".name must be 1..64 characters of A-Z a-z 0-9 . _ - (got "
                    + node.path("name") + ")");
        }
        if (name.equals("other")) {
            throw new TenantsFileException(at + ".name 'other' is reserved (it labels tenants past the metric limit)");
        }
        if (byName.containsKey(name)) {
            throw new TenantsFileException(at + ".name '" + name + "' is declared twice");
        }
        double weight = doubleField(node, "weight", at + ".", 1.0, MAX_WEIGHT);
        PriorityClass maxClass = PriorityClass.DEFAULT;
        JsonNode maxNode = node.path("max_class");
        if (!maxNode.isMissingNode() && !maxNode.isNull()) {
            maxClass = PriorityClass.parse(maxNode.isTextual() ? maxNode.asText() : null);
            if (maxClass == null) {
                throw new TenantsFileException(at + ".max_class must be one of system, interactive, default, batch (got "
                        + maxNode + ")");
            }
        }
        long rpm = longField(node, "requests_per_minute", at + ".", 0, 0, MAX_PER_MINUTE);
        long tpm = longField(node, "tokens_per_minute", at + ".", 0, 0, MAX_PER_MINUTE);
        TenantSpec spec = new TenantSpec(name, weight, maxClass, rpm, tpm);
        List<String> digests = new java.util.ArrayList<>();
        JsonNode one = node.path("api_key_sha256");
        if (!one.isMissingNode() && !one.isNull()) {
            digests.add(one.asText());
        }
        JsonNode many = node.path("api_keys_sha256");
        if (!many.isMissingNode() && !many.isNull()) {
            if (!many.isArray()) {
                throw new TenantsFileException(at + ".api_keys_sha256 must be a list");
            }
            many.forEach(d -> digests.add(d.asText()));
        }
        for (String digest : digests) {
            if (!HEX64.matcher(digest).matches()) {
                throw new TenantsFileException(at + ": an API key digest must be 64 lowercase hex characters"
                        + " (sha256sum of the key); got " + digest.length() + " characters");
            }
            TenantSpec previous = byDigest.putIfAbsent(digest, spec);
            if (previous != null) {
                throw new TenantsFileException(at + ": API key digest already belongs to tenant '" + previous.name() + "'");
            }
        }
        byName.put(name, spec);
    }

    private static ClassSpec classSpec(JsonNode node, String at, ClassSpec base) throws TenantsFileException {
        if (!node.isObject()) {
            throw new TenantsFileException(at + " must be a mapping");
        }
        unknownFields(node, CLASS, at + ".");
        try {
            return new ClassSpec(
                    longField(node, "reserved_floor_tokens", at + ".", base.reservedFloorTokens(), 0, MAX_PER_MINUTE),
                    doubleField(node, "reserved_share", at + ".", base.reservedShare(), 1.0),
                    (int) longField(node, "queue_cap", at + ".", base.queueCap(), 0, ClassSpec.MAX_QUEUE_CAP),
                    longField(node, "queue_timeout_ms", at + ".", base.queueTimeoutMillis(), 1, ClassSpec.MAX_TIMEOUT_MILLIS),
                    longField(node, "starvation_ms", at + ".", base.starvationMillis(), 1, ClassSpec.MAX_TIMEOUT_MILLIS),
                    boolField(node, "can_preempt", at + ".", base.canPreempt()));
        } catch (IllegalArgumentException e) {
            throw new TenantsFileException(at + ": " + e.getMessage());
        }
    }

    private static void unknownFields(JsonNode node, Set<String> known, String at) throws TenantsFileException {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!known.contains(field)) {
                throw new TenantsFileException(at + field + ": unknown field (known: " + String.join(", ",
                        new java.util.TreeSet<>(known)) + ")");
            }
        }
    }

    private static long longField(JsonNode node, String field, String at, long absent, long min, long max)
            throws TenantsFileException {
        JsonNode v = node.path(field);
        if (v.isMissingNode() || v.isNull()) {
            return absent;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min || v.asLong() > max) {
            throw new TenantsFileException(at + field + " must be an integer within " + min + ".." + max + " (got " + v + ")");
        }
        return v.asLong();
    }

    private static double doubleField(JsonNode node, String field, String at, double absent, double max)
            throws TenantsFileException {
        JsonNode v = node.path(field);
        if (v.isMissingNode() || v.isNull()) {
            return absent;
        }
        if (!v.isNumber() || !(v.asDouble() >= 0) || v.asDouble() > max
                || (field.equals("weight") && !(v.asDouble() > 0))) {
            throw new TenantsFileException(at + field + " must be a number within " + (field.equals("weight") ? "(0" : "[0")
                    + ".." + max + "] (got " + v + ")");
        }
        return v.asDouble();
    }

    private static boolean boolField(JsonNode node, String field, String at, boolean absent) throws TenantsFileException {
        JsonNode v = node.path(field);
        if (v.isMissingNode() || v.isNull()) {
            return absent;
        }
        if (!v.isBoolean()) {
            throw new TenantsFileException(at + field + " must be true or false (got " + v + ")");
        }
        return v.asBoolean();
    }
}
