package io.kvroute.router.dispatch;

import io.kvroute.router.policy.Decision;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Records a cache-aware decision's prompt ownership in the prefix indexes once, when the chosen worker has
 * accepted the request: its first 2xx status line. A worker that was unreachable, refused the connection,
 * timed out before answering or answered an error never becomes the prompt's owner, so the next request
 * with that prefix is not steered to a worker that holds nothing. On the PD path the prefill worker is
 * the one that computes and caches the prompt, so its answer is the one that counts.
 *
 * <p>Threading: {@link #onStatus} may be called from any upstream callback thread; the record runs at most
 * once.
 */
final class OwnershipOnAccept {

    /** For decisions that are not cache-aware: nothing to record. */
    static final OwnershipOnAccept NONE = new OwnershipOnAccept(null, d -> { });

    private final Decision decision;
    private final Consumer<Decision> record;
    private final AtomicBoolean recorded = new AtomicBoolean();

    private OwnershipOnAccept(Decision decision, Consumer<Decision> record) {
        this.decision = decision;
        this.record = record;
    }

    /** The recorder for {@code decision}; {@link #NONE} when it carries no cache-aware detail. */
    static OwnershipOnAccept of(Decision decision, Consumer<Decision> record) {
        return decision == null || decision.cacheAware() == null ? NONE : new OwnershipOnAccept(decision, record);
    }

    /** The worker's status line arrived: a 2xx records the ownership (once). */
    void onStatus(int status) {
        if (decision != null && status >= 200 && status < 300 && recorded.compareAndSet(false, true)) {
            record.accept(decision);
        }
    }
}
