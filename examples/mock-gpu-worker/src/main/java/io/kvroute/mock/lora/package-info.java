/**
 * The mock worker's LoRA adapters ({@code --max-loras}): {@link io.kvroute.mock.lora.LoraSlots} is the
 * engine side (served adapters, GPU slots, load latency, LRU eviction, cache salts);
 * {@link io.kvroute.mock.lora.LoraApi} the HTTP side (vLLM's and SGLang's load and unload endpoints, model
 * cards, {@code vllm:lora_requests_info}) and the hook generation requests go through.
 */
package io.kvroute.mock.lora;
