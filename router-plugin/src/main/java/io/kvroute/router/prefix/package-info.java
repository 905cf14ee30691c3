/**
 * Which workers hold which prompt prefixes: a compressed radix tree over int keys with per-worker
 * ownership, LRU capacity eviction and a node cap. Pure data structure (no Jetty, ZeroMQ or DJL).
 *
 * <p>Start with {@link io.kvroute.router.prefix.PrefixIndex}; keys come from
 * {@link io.kvroute.router.prefix.KeyBuilder}. Design notes: {@code docs/prefix-index.md}.
 */
package io.kvroute.router.prefix;
