package io.kvroute.router.tenant;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the current {@link TenantDirectory} of a tenants file and reloads it when the file's
 * modification time or size changes. The adapter calls {@link #poll} on its scheduler; requests read
 * {@link #current} (one volatile read) and keep that snapshot, so a reload never drops or splits a
 * request. A file that fails to read or validate keeps the previous directory, is logged and counted
 * ({@link #failedReloads}); a later good edit is picked up as usual.
 *
 * <p>Threading: {@link #poll} is serialized by the caller's single scheduler thread (it is also
 * synchronized, so a test may call it from anywhere); {@link #current} is thread-safe.
 */
public final class TenantDirectoryWatcher {

    private static final Logger LOG = LoggerFactory.getLogger(TenantDirectoryWatcher.class);

    private final Path path;
    private final String apiKey;
    private final AtomicLong failedReloads = new AtomicLong();
    private final AtomicLong reloads = new AtomicLong();
    private volatile TenantDirectory current;
    private long seenModifiedMillis; // guarded by this
    private long seenSize; // guarded by this

    private TenantDirectoryWatcher(Path path, String apiKey, TenantDirectory first, long modifiedMillis, long size) {
        this.path = path;
        this.apiKey = apiKey;
        this.current = first;
        this.seenModifiedMillis = modifiedMillis;
        this.seenSize = size;
    }

    /**
     * Reads {@code path} once; a broken file at startup is an error (the router must not start with
     * an open door). {@code apiKey} ({@code --api-key}, or null) joins every directory as one tenant.
     */
    public static TenantDirectoryWatcher open(Path path, String apiKey) throws TenantsFile.TenantsFileException {
        Objects.requireNonNull(path, "path");
        long modified = modifiedMillis(path);
        long size = size(path);
        TenantDirectory first = TenantsFile.read(path).withApiKey(apiKey);
        return new TenantDirectoryWatcher(path, apiKey, first, modified, size);
    }

    public TenantDirectory current() {
        return current;
    }

    /** Reloads the file when it changed; returns true when a new directory was published. */
    public synchronized boolean poll() {
        long modified = modifiedMillis(path);
        long size = size(path);
        if (modified == seenModifiedMillis && size == seenSize) {
            return false;
        }
        seenModifiedMillis = modified;
        seenSize = size;
        TenantDirectory next;
        try {
            next = TenantsFile.read(path).withApiKey(apiKey);
        } catch (TenantsFile.TenantsFileException e) {
            failedReloads.incrementAndGet();
            LOG.warn("tenants file {} changed but is invalid; keeping the previous tenants: {}", path, e.getMessage());
            return false;
        }
        if (next.equals(current)) {
            return false;
        }
        current = next;
        reloads.incrementAndGet();
        LOG.info("tenants file {} reloaded: {} tenants", path, next.tenants().size());
        return true;
    }

    public long failedReloads() {
        return failedReloads.get();
    }

    public long reloads() {
        return reloads.get();
    }

    private static long modifiedMillis(Path path) {
        try {
            return Files.getLastModifiedTime(path).toMillis();
        } catch (IOException e) {
            return -1;
        }
    }

    private static long size(Path path) {
        try {
            return Files.size(path);
        } catch (IOException e) {
            return -1;
        }
    }
}
