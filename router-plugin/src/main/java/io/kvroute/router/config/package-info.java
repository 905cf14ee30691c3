/**
 * Configuration: {@link io.kvroute.router.config.RouterOptions} (picocli flags plus a YAML plugin config
 * whose keys are the flag names) builds a validated {@link io.kvroute.router.config.RouterConfig}.
 */
package io.kvroute.router.config;
