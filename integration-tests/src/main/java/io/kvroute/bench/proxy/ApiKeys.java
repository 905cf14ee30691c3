package io.kvroute.bench.proxy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * {@code count} API keys named {@code prefix} plus a five-digit number, handed out in turn: request n
 * carries key {@code n mod count}, from the Java generator and from wrk alike (a Lua request function
 * that numbers its requests the same way).
 */
record ApiKeys(String prefix, int count) {

    ApiKeys {
        if (!prefix.matches("[A-Za-z0-9-]+")) {
            throw new IllegalArgumentException("prefix must be letters, digits and dashes: " + prefix);
        }
        if (count < 1 || count > 100_000) {
            throw new IllegalArgumentException("count must be 1..100000: " + count);
        }
    }

    String key(long n) {
        return prefix + String.format(Locale.ROOT, "%05d", Math.floorMod(n, (long) count));
    }

    /** The key's SHA-256 digest in hex, as a tenants file stores it. */
    String sha256(long n) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(key(n).getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A wrk {@code request} function that sets the next key's {@code Authorization} header on each request. */
    String wrkRequestFunction() {
        return "local kvroute_n = -1\n"
                + "request = function()\n"
                + "  kvroute_n = kvroute_n + 1\n"
                + "  wrk.headers[\"Authorization\"] = string.format(\"Bearer " + prefix + "%05d\", kvroute_n % " + count + ")\n"
                + "  return wrk.format()\n"
                + "end\n";
    }
}
