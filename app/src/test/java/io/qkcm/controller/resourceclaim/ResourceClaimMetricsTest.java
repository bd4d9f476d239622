package io.qkcm.controller.resourceclaim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimSpecBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimStatusBuilder;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.controller.util.resource.ResourceClaim;

/**
 * resourceclaim_controller_resource_claims{allocated, admin_access} as upstream's collector reports it: one
 * series per label pair that has claims, none for a pair without.
 */
class ResourceClaimMetricsTest {

    static ResourceClaim claim(String name, boolean allocated, boolean adminAccess) {
        ResourceClaim c = new ResourceClaim();
        c.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("ns").build());
        c.setSpec(new ResourceClaimSpecBuilder().withNewDevices().addNewRequest().withName("req").withNewExactly()
                .withDeviceClassName("gpu").withAdminAccess(adminAccess ? Boolean.TRUE : null).endExactly().endRequest()
                .endDevices().build());
        if (allocated) {
            c.setStatus(new ResourceClaimStatusBuilder().withAllocation(new AllocationResultBuilder().build()).build());
        }
        return c;
    }

    static Double gauge(SimpleMeterRegistry registry, String allocated, String adminAccess) {
        Gauge g = registry.find("resourceclaim.controller.resource.claims").tag("allocated", allocated)
                .tag("admin_access", adminAccess).gauge();
        return g == null ? null : g.value();
    }

    @Test
    void countsClaimsByAllocationAndAdminAccess() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ResourceClaimMetrics metrics = new ResourceClaimMetrics(registry);
        ResourceClaim a = claim("a", false, false);
        metrics.claimChanged(null, a);
        metrics.claimChanged(null, claim("b", false, false));
        metrics.claimChanged(null, claim("admin", false, true));
        assertThat(gauge(registry, "false", "false")).isEqualTo(2.0);
        assertThat(gauge(registry, "false", "true")).isEqualTo(1.0);
        assertThat(gauge(registry, "true", "false")).isNull();

        // a is allocated
        ResourceClaim allocatedA = claim("a", true, false);
        metrics.claimChanged(a, allocatedA);
        assertThat(gauge(registry, "false", "false")).isEqualTo(1.0);
        assertThat(gauge(registry, "true", "false")).isEqualTo(1.0);
        // a resync changes nothing
        metrics.claimChanged(allocatedA, allocatedA);
        assertThat(gauge(registry, "true", "false")).isEqualTo(1.0);

        metrics.claimChanged(allocatedA, null);
        assertThat(gauge(registry, "true", "false")).isNull();
        assertThat(metrics.resourceClaims("true", "false")).isNull();
        assertThat(metrics.resourceClaims("false", "false")).isEqualTo(1L);
    }
}
