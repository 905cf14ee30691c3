package io.kvroute.router.http;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The inference endpoints and the fields the router itself needs from each body. Only what the
 * router reads is validated here; everything else is the engine's business and passes through.
 */
enum Endpoint {
    CHAT("/v1/chat/completions") {
        @Override
        void validate(JsonNode body) throws ApiException {
            JsonNode messages = body.get("messages");
            if (messages == null || !messages.isArray() || messages.isEmpty()) {
                throw new ApiException(400, "'messages' must be a non-empty array");
            }
            for (JsonNode message : messages) {
                if (!message.isObject() || !message.path("role").isTextual()) {
                    throw new ApiException(400, "each message must be an object with a string 'role'");
                }
            }
            commonSampling(body, "max_tokens");
            commonSampling(body, "max_completion_tokens");
        }
    },
    COMPLETIONS("/v1/completions") {
        @Override
        void validate(JsonNode body) throws ApiException {
            JsonNode prompt = body.get("prompt");
            if (prompt == null || !(prompt.isTextual() || prompt.isArray())) {
                throw new ApiException(400, "'prompt' must be a string or an array");
            }
            commonSampling(body, "max_tokens");
        }
    },
    GENERATE("/generate") {
        @Override
        void validate(JsonNode body) throws ApiException {
            JsonNode text = body.get("text");
            JsonNode inputIds = body.get("input_ids");
            if (text == null && inputIds == null) {
                throw new ApiException(400, "one of 'text' or 'input_ids' is required");
            }
            if (text != null && !(text.isTextual() || text.isArray())) {
                throw new ApiException(400, "'text' must be a string or an array of strings");
            }
            if (inputIds != null && !inputIds.isArray()) {
                throw new ApiException(400, "'input_ids' must be an array");
            }
            JsonNode sampling = body.get("sampling_params");
            if (sampling != null && !sampling.isNull()) {
                if (!sampling.isObject()) {
                    throw new ApiException(400, "'sampling_params' must be an object");
                }
                commonSampling(sampling, "max_new_tokens");
            }
        }
    };

    /** Largest accepted token budget; anything above is a client error, not an engine problem. */
    static final long MAX_TOKENS_LIMIT = 10_000_000L;

    final String path;

    Endpoint(String path) {
        this.path = path;
    }

    abstract void validate(JsonNode body) throws ApiException;

    static Endpoint forPath(String path) {
        for (Endpoint endpoint : values()) {
            if (endpoint.path.equals(path)) {
                return endpoint;
            }
        }
        return null;
    }

    /** Checks the fields the router reads for every endpoint: model, stream, a token budget. */
    static void validateCommon(JsonNode body) throws ApiException {
        JsonNode model = body.get("model");
        if (model != null && !model.isNull() && !model.isTextual()) {
            throw new ApiException(400, "'model' must be a string");
        }
        JsonNode stream = body.get("stream");
        if (stream != null && !stream.isNull() && !stream.isBoolean()) {
            throw new ApiException(400, "'stream' must be a boolean");
        }
    }

    private static void commonSampling(JsonNode node, String field) throws ApiException {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return;
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong()) {
            throw new ApiException(400, "'" + field + "' must be an integer");
        }
        long budget = value.asLong();
        if (budget < 0 || budget > MAX_TOKENS_LIMIT) {
            throw new ApiException(400, "'" + field + "' must be between 0 and " + MAX_TOKENS_LIMIT + " (got " + budget + ")");
        }
    }
}
