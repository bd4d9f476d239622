package io.qkcm.controller.resourceclaim;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's resourceclaim_controller_creates_total{status, admin_access} (Micrometer adds {@code _total}).
 * Its resourceclaim_controller_resource_claims gauge (claims by allocation and admin access) is not
 * ported.
 */
final class ResourceClaimMetrics {

    private final MeterRegistry registry;

    ResourceClaimMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    void created(String status, String adminAccess) {
        counter(status, adminAccess).increment();
    }

    Counter counter(String status, String adminAccess) {
        return Counter.builder("resourceclaim.controller.creates")
                .description("Number of ResourceClaims creation requests, categorized by creation status and admin access")
                .tag("status", status).tag("admin_access", adminAccess).register(registry);
    }
}
