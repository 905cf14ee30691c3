package io.kvroute.mock.pd;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A decode worker's KV capacity in tokens, shared by its requests: a request reserves its prompt
 * when it starts decoding and one token per generated token, and releases everything when it ends.
 * When a reservation fails the segment ends with the capacity marker, as a decode node that runs
 * out of KV does (LightLLM PD). {@code capacityTokens <= 0} means unlimited.
 */
public final class KvBudget {

    private final long capacityTokens;
    private final AtomicLong usedTokens = new AtomicLong();

    public KvBudget(long capacityTokens) {
        this.capacityTokens = capacityTokens;
    }

    public boolean tryReserve(long tokens) {
        if (capacityTokens <= 0) {
            usedTokens.addAndGet(tokens);
            return true;
        }
        while (true) {
            long used = usedTokens.get();
            if (used + tokens > capacityTokens) {
                return false;
            }
            if (usedTokens.compareAndSet(used, used + tokens)) {
                return true;
            }
        }
    }

    public void release(long tokens) {
        usedTokens.addAndGet(-tokens);
    }

    public long usedTokens() {
        return usedTokens.get();
    }

    public long capacityTokens() {
        return capacityTokens;
    }
}
