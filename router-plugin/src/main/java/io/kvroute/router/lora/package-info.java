/**
 * LoRA adapters: which worker serves which adapter and where a request for one goes. Start with
 * {@link io.kvroute.router.lora.LoraRouting} (naming, candidates, dynamic loading), then
 * {@link io.kvroute.router.lora.AdapterDirectory} (the published {@link io.kvroute.router.lora.AdapterView}),
 * {@link io.kvroute.router.lora.AdapterAffinity} (llm-d's score) and
 * {@link io.kvroute.router.lora.AdapterPlacement} (residency and load together, used by the cache-aware
 * ladder's miss fallback). Plain Java apart from the meters; the HTTP load request is
 * {@code http.JettyAdapterLoader}. docs/lora.md describes the whole.
 */
package io.kvroute.router.lora;
