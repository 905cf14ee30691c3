package io.kvroute.scheduler.admission;

/**
 * A per-poll budget that a pending request must also fit to enter the engine, on top of the request
 * slot and the KV reservation. {@link AdmissionGate#poll(long, EntryBudget)} asks it head-first and
 * stops at the first request it refuses (no overtaking), as LightLLM's router does.
 */
@FunctionalInterface
public interface EntryBudget<T> {

    /** Every request fits (no budget beyond slots and KV). */
    static <T> EntryBudget<T> unlimited() {
        return r -> true;
    }

    /** True (and the budget charged) when {@code request} fits; false stops this poll's admissions. */
    boolean tryEnter(T request);
}
