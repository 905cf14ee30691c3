package io.kvroute.router.lora;

import io.kvroute.router.worker.Worker;
import java.util.concurrent.CompletableFuture;

/**
 * Asks one worker to load one adapter: vLLM {@code POST /v1/load_lora_adapter} (only with
 * {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING=1}; vLLM {@code vllm/entrypoints/serve/lora/api_router.py}), SGLang
 * {@code POST /load_lora_adapter} (SGLang {@code http_server.py}), body {@code {"lora_name", "lora_path"}}.
 * Implemented at the edge over HTTP; tests use in-process workers.
 */
public interface AdapterLoadClient {

    /**
     * Completes normally once the worker serves the adapter, exceptionally with {@link LoadFailed} (the
     * worker refused or could not be reached) or a {@link java.util.concurrent.TimeoutException}.
     */
    CompletableFuture<Void> load(Worker worker, String adapter, String path, long timeoutMillis);

    /** The worker answered a load request with an error. */
    final class LoadFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public LoadFailed(String message) {
            super(message, null, false, false);
        }
    }
}
