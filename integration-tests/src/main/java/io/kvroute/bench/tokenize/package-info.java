/** The {@code tokenize-speed} scenario: the router's first-turn tokenization against HF tokenizers' Rust core. */
package io.kvroute.bench.tokenize;
