package io.kvroute.router.lora;

import java.util.Set;

/**
 * What one worker is known to do with LoRA adapters. Immutable.
 *
 * @param listed adapters the worker serves: its {@code /v1/models} cards with a {@code parent} (vLLM
 *     {@code vllm/entrypoints/openai/models/serving.py}, SGLang {@code http_server.py}), plus those the router
 *     loaded there itself
 * @param running adapters of its running requests ({@code vllm:lora_requests_info}); empty when unknown
 * @param waiting adapters of its waiting requests
 * @param maxLoras adapter slots ({@code max_lora} or SGLang's slot total), 0 when unknown
 * @param slotsUsed slots in use (SGLang), -1 when unknown
 */
public record WorkerAdapters(Set<String> listed, Set<String> running, Set<String> waiting, int maxLoras, int slotsUsed) {

    public static final WorkerAdapters UNKNOWN = new WorkerAdapters(Set.of(), Set.of(), Set.of(), 0, -1);

    public WorkerAdapters {
        listed = Set.copyOf(listed);
        running = Set.copyOf(running);
        waiting = Set.copyOf(waiting);
    }

    public WorkerAdapters withListed(Set<String> names) {
        return new WorkerAdapters(names, running, waiting, maxLoras, slotsUsed);
    }

    public WorkerAdapters withLoad(Set<String> newRunning, Set<String> newWaiting, int newMaxLoras, int newSlotsUsed) {
        return new WorkerAdapters(listed, newRunning, newWaiting, newMaxLoras, newSlotsUsed);
    }
}
