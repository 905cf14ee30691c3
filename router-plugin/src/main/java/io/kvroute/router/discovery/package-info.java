/**
 * Kubernetes service discovery: pods become workers. Start reading at
 * {@link io.kvroute.router.discovery.FleetReconciler}, the pure core (pod facts in, registry actions
 * out, no fabric8 types); {@link io.kvroute.router.discovery.DiscoveryRules} says which pod is which
 * worker; {@link io.kvroute.router.discovery.KubernetesDiscovery} is the fabric8 informer adapter that
 * feeds it and applies its actions to the {@link io.kvroute.router.worker.WorkerRegistry}.
 */
package io.kvroute.router.discovery;
