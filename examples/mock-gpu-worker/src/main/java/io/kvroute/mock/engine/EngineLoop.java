package io.kvroute.mock.engine;

import io.kvroute.scheduler.engine.StepLoop;
import java.util.List;
import java.util.Locale;

/**
 * Which real engine's step loop the mock follows ({@code --engine-loop}); see docs/scheduler.md for
 * the upstream files each mode is read from.
 *
 * <ul>
 *   <li>{@link #LIGHTLLM}: one forward pass per step. When any prefill chunk fits, the step is a
 *       prefill-only pass and running decodes wait; otherwise a decode-only pass (LightLLM's default
 *       aggressive schedule, {@code mode_backend/chunked_prefill/impl.py} {@code infer_loop} and
 *       {@code control_state.py} {@code _agressive_way}). The prefill budget loop skips a chunk that
 *       does not fit ({@code base_backend.py} {@code _get_classed_reqs}), and requests reach the
 *       engine through the router's pending-first-chunk gate of {@code 2 x batch_max_tokens}
 *       ({@link io.kvroute.scheduler.admission.FirstChunkBudget}).</li>
 *   <li>{@link #SGLANG}: SGLang with mixed chunked prefill: every step runs the running decode
 *       batch and, when prefill work is waiting, one prefill batch in the same forward pass
 *       ({@code managers/scheduler.py} {@code get_next_batch_to_run} / {@code get_new_batch_prefill}
 *       with {@code --enable-mixed-chunk}; {@code PrefillAdder} in {@code schedule_policy.py});
 *       see {@link io.kvroute.scheduler.batch.MixedChunkSelector}. No router gate: the scheduler
 *       sees its whole waiting queue.</li>
 * </ul>
 */
public enum EngineLoop {
    LIGHTLLM("lightllm", StepLoop.LIGHTLLM),
    SGLANG("sglang", StepLoop.SGLANG);

    /** Accepted values of {@code --engine-loop}. */
    public static final List<String> NAMES = List.of("lightllm", "sglang");

    private final String flagValue;
    private final StepLoop stepLoop;

    EngineLoop(String flagValue, StepLoop stepLoop) {
        this.flagValue = flagValue;
        this.stepLoop = stepLoop;
    }

    /** The scheduler plugin's step loop that composes this engine's steps. */
    public StepLoop stepLoop() {
        return stepLoop;
    }

    public String flagValue() {
        return flagValue;
    }

    /** Parses {@code --engine-loop}; null or blank means {@code lightllm}. */
    public static EngineLoop forName(String name) {
        String n = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        switch (n) {
            case "":
            case "lightllm":
                return LIGHTLLM;
            case "sglang":
                return SGLANG;
            default:
                throw new IllegalArgumentException("engine-loop: unknown value '" + name + "'; choose one of "
                        + String.join(", ", NAMES));
        }
    }
}
