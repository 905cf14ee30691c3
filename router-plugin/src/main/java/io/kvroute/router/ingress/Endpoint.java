package io.kvroute.router.ingress;

import com.fasterxml.jackson.core.JsonToken;
import io.kvroute.router.dispatch.ApiKind;

/**
 * The inference endpoints and the fields the router itself needs from each body. Only what the
 * router reads is validated (from a {@link BodyProbe}); everything else is the engine's business
 * and passes through untouched.
 */
enum Endpoint {
    CHAT(ApiKind.CHAT) {
        @Override
        void validate(BodyProbe body) throws ApiException {
            if (body.messageCount <= 0) {
                throw new ApiException(400, "'messages' must be a non-empty array");
            }
            if (body.messageProblem != null) {
                throw new ApiException(400, body.messageProblem);
            }
        }
    },
    COMPLETIONS(ApiKind.COMPLETIONS) {
        @Override
        void validate(BodyProbe body) throws ApiException {
            // vLLM takes prompt_embeds in place of a prompt (CompletionRequest.validate_prompt_and_prompt_embeds,
            // vllm vllm/entrypoints/openai/completion/protocol.py)
            boolean noPrompt = body.prompt == null || body.prompt == JsonToken.VALUE_NULL;
            if (noPrompt && body.promptEmbeds) {
                return;
            }
            if (body.prompt != JsonToken.VALUE_STRING && body.prompt != JsonToken.START_ARRAY) {
                throw new ApiException(400, "'prompt' must be a string or an array");
            }
        }
    },
    GENERATE(ApiKind.GENERATE) {
        @Override
        void validate(BodyProbe body) throws ApiException {
            boolean hasText = body.text != null && body.text != JsonToken.VALUE_NULL;
            boolean hasIds = body.inputIds != null && body.inputIds != JsonToken.VALUE_NULL;
            if (!hasText && !hasIds) {
                throw new ApiException(400, "one of 'text' or 'input_ids' is required");
            }
            if (hasText && body.text != JsonToken.VALUE_STRING && body.text != JsonToken.START_ARRAY) {
                throw new ApiException(400, "'text' must be a string or an array of strings");
            }
            if (hasIds && body.inputIds != JsonToken.START_ARRAY) {
                throw new ApiException(400, "'input_ids' must be an array");
            }
            if (body.samplingParams != null && body.samplingParams != JsonToken.VALUE_NULL
                    && body.samplingParams != JsonToken.START_OBJECT) {
                throw new ApiException(400, "'sampling_params' must be an object");
            }
        }
    };

    /** Largest accepted token budget; anything above is a client error, not an engine problem. */
    static final long MAX_TOKENS_LIMIT = 10_000_000L;

    final ApiKind api;
    final String path;

    Endpoint(ApiKind api) {
        this.api = api;
        this.path = api.path;
    }

    abstract void validate(BodyProbe body) throws ApiException;

    static Endpoint forPath(String path) {
        for (Endpoint endpoint : values()) {
            if (endpoint.path.equals(path)) {
                return endpoint;
            }
        }
        return null;
    }
}
