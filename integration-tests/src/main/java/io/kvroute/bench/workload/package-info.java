/**
 * Pure, seeded workload generators: each returns a {@link io.kvroute.bench.workload.Workload} of
 * scheduled chat requests in simulated time. Prompts come from {@link io.kvroute.bench.workload.PromptBuilder}
 * (target token count x chars per token). No I/O.
 */
package io.kvroute.bench.workload;
