package io.kvroute.router.worker;

import java.util.Locale;

/**
 * Which serving engine runs behind a worker, as discovery learns it (or {@code --engine-type} states
 * it): SGLang answers {@code /server_info}; vLLM has none in production (only with
 * {@code VLLM_SERVER_DEV_MODE=1}, vLLM {@code vllm/entrypoints/serve/dev}) but answers {@code /v1/models}
 * and {@code /version}. The type decides the {@code /metrics} names, whether {@code input_ids} may be
 * forwarded on chat, and whether a data-parallel rank can be pinned by header.
 */
public enum EngineType {
    SGLANG("sglang"),
    /** vLLM: ignores {@code input_ids} on chat (vLLM {@code vllm/entrypoints/openai/chat_completion/protocol.py}). */
    VLLM("vllm"),
    TRTLLM("trtllm");

    private final String label;

    EngineType(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** The type named {@code s} ({@code sglang}, {@code vllm}, {@code trtllm}), or null for {@code auto}/null. */
    public static EngineType parse(String s) {
        if (s == null || s.equalsIgnoreCase("auto")) {
            return null;
        }
        for (EngineType t : values()) {
            if (t.label.equals(s.toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown engine type '" + s + "' (auto, sglang, vllm, trtllm)");
    }
}
