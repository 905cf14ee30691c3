/**
 * Tenants and quality of service: who a request is for, which priority class it may use, how fast it
 * may go, and when it may reach the engines. Plain Java (no Jetty, ZeroMQ or DJL), clock injected.
 *
 * <p>Start reading at {@link io.kvroute.router.tenant.TenantDirectory} (a validated snapshot of the
 * tenants file, published by {@link io.kvroute.router.tenant.TenantDirectoryWatcher}), then
 * {@link io.kvroute.router.tenant.QosGate} (the router-side queue: classes with reservations,
 * timeouts, starvation promotion, preemption before the first byte, each request's tokens held on one
 * worker in {@link io.kvroute.router.tenant.CapacityLedger}, placed by {@link io.kvroute.router.tenant.Placement}
 * with its bounded wait for a request's prefix holder) and
 * {@link io.kvroute.router.tenant.FairQueue} (VTC fair share per tenant with locality inside the
 * slack). {@link io.kvroute.router.tenant.RateLimiter} enforces requests and weighted tokens per minute.
 * The request-path adapter is {@code io.kvroute.router.ingress.TenantFrontDoor}; the user guide is docs/tenants.md.
 */
package io.kvroute.router.tenant;
