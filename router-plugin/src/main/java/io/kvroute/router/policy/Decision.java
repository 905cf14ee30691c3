package io.kvroute.router.policy;

import io.kvroute.router.worker.Worker;
import java.util.Objects;

/**
 * A policy's answer: the worker, why, and which load signal the comparison used.
 *
 * @param worker the chosen worker
 * @param reason the ladder exit that produced it
 * @param pressureSource {@code router_local}, {@code native_queue_tokens},
 *     {@code estimated_prefill_queue_ms}, or {@code none} when no load was compared
 * @param cacheAware what the cache-aware ladder saw (metrics, the prefix match to insert after
 *     dispatch); null for every other policy and for sticky-session hits
 */
public record Decision(Worker worker, DecisionReason reason, String pressureSource, CacheAwareDetail cacheAware) {

    public static final String SOURCE_NONE = "none";
    public static final String SOURCE_ROUTER_LOCAL = "router_local";

    public Decision(Worker worker, DecisionReason reason, String pressureSource) {
        this(worker, reason, pressureSource, null);
    }

    public Decision {
        Objects.requireNonNull(worker, "worker");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(pressureSource, "pressureSource");
    }

    /** The same decision with another reason (a wrapper relabelling its delegate's answer). */
    Decision withReason(DecisionReason newReason) {
        return new Decision(worker, newReason, pressureSource, cacheAware);
    }
}
