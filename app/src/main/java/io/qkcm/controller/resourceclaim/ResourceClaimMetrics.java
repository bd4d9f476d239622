package io.qkcm.controller.resourceclaim;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.controller.util.resource.ResourceClaim;

/**
 * Upstream's pkg/controller/resourceclaim/metrics: resourceclaim_controller_creates_total{status, admin_access}
 * (Micrometer adds {@code _total}) and the resourceclaim_controller_resource_claims{allocated, admin_access}
 * gauge. Upstream's collector counts the claim cache at each scrape and emits only the label pairs that have
 * claims; here the counts follow the claim informer's events (the same cache), and a pair's gauge is
 * registered while it has claims and removed when it has none.
 */
final class ResourceClaimMetrics {

    private final MeterRegistry registry;
    private final Map<List<String>, AtomicLong> claims = new HashMap<>();
    private final Map<List<String>, Gauge> gauges = new HashMap<>();

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

    /** A claim event: {@code old} null for an add, {@code cur} null for a delete. */
    synchronized void claimChanged(ResourceClaim old, ResourceClaim cur) {
        if (old != null) {
            add(labels(old), -1);
        }
        if (cur != null) {
            add(labels(cur), 1);
        }
    }

    /** The gauge's value for a label pair, absent (null) when no claim has it. */
    synchronized Long resourceClaims(String allocated, String adminAccess) {
        AtomicLong n = claims.get(List.of(allocated, adminAccess));
        return n == null ? null : n.get();
    }

    private static List<String> labels(ResourceClaim claim) {
        String allocated = claim.getStatus() != null && claim.getStatus().getAllocation() != null ? "true" : "false";
        return List.of(allocated, ResourceClaimController.adminAccessLabel(claim));
    }

    private void add(List<String> key, long delta) {
        AtomicLong n = claims.computeIfAbsent(key, k -> new AtomicLong());
        long now = n.addAndGet(delta);
        if (now > 0 && !gauges.containsKey(key)) {
            gauges.put(key, Gauge.builder("resourceclaim.controller.resource.claims", n, AtomicLong::get)
                    .description("Number of ResourceClaims, categorized by allocation status and admin access")
                    .tag("allocated", key.get(0)).tag("admin_access", key.get(1)).register(registry));
        } else if (now <= 0) {
            claims.remove(key);
            Gauge g = gauges.remove(key);
            if (g != null) {
                registry.remove(g);
            }
        }
    }
}
