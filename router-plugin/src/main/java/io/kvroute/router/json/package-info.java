/**
 * Reading request bodies the way the router promises to: JSON {@code null} is the same as an absent
 * field, everywhere. Start at {@link io.kvroute.router.json.JsonFields}; every optional field the
 * router reads or rewrites goes through it.
 */
package io.kvroute.router.json;
