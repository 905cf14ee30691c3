/**
 * Ingress tokenization: turn a parsed request body into token ids once per request.
 *
 * <p>Start with {@link io.kvroute.router.tokenize.RequestTokens#of}: chat requests on a model whose
 * chat template compiles get engine-equivalent ids from its {@code TemplateChatEncoder} (the model's own
 * template through {@link io.kvroute.router.template.ChatTemplate}, after the engine's message
 * preprocessing in {@code EnginePreprocessing}); everything else gets routing-only ids from the raw text. {@link
 * io.kvroute.router.tokenize.ForwardingGuard} decides whether engine-equivalent ids may be forwarded
 * to the engine as {@code input_ids}. {@link io.kvroute.router.tokenize.TokenizerRegistry} loads one
 * DJL HuggingFace tokenizer per model from a local directory, offline; it is the only class here that
 * touches DJL (together with its package-private {@code DjlModelTokenizer} and {@code DjlOffline}).
 * The behaviour and its limits are described in {@code docs/tokenization.md}.
 */
package io.kvroute.router.tokenize;
