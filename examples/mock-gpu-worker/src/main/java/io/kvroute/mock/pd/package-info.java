/**
 * Prefill/decode roles of the mock worker: the KV rendezvous a prefill worker serves on its
 * bootstrap port, and the decode worker's KV budget that ends segments with the capacity marker.
 */
package io.kvroute.mock.pd;
