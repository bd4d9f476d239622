package io.qkcm.controller.resourcequota.evaluator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceSubRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimSpecBuilder;
import io.qkcm.controller.util.resource.ResourceClaim;

/** resource_claims_test.go's TestResourceClaimEvaluatorUsage and its MatchingResources. */
class ResourceClaimEvaluatorTest {

    private static DeviceRequest exactly(String name, String cls, String mode, Long count) {
        return new DeviceRequestBuilder().withName(name).withNewExactly().withDeviceClassName(cls).withAllocationMode(mode)
                .withCount(count).endExactly().build();
    }

    private static DeviceRequest firstAvailable(Object[]... subs) {
        DeviceRequestBuilder b = new DeviceRequestBuilder().withName("req-0");
        for (Object[] s : subs) {
            b.addToFirstAvailable(new DeviceSubRequestBuilder().withName((String) s[0]).withDeviceClassName((String) s[1])
                    .withAllocationMode((String) s[2]).withCount((Long) s[3]).build());
        }
        return b.build();
    }

    private static ResourceClaim claim(List<DeviceRequest> requests) {
        ResourceClaim c = new ResourceClaim();
        c.setMetadata(new ObjectMetaBuilder().withName("foo").withNamespace("ns").build());
        c.setSpec(new ResourceClaimSpecBuilder().withNewDevices().withRequests(requests).endDevices().build());
        return c;
    }

    private static Map<String, String> usage(ResourceClaim c) {
        Map<String, String> out = new TreeMap<>();
        ResourceClaimEvaluator.usage(c).forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    private static Map<String, String> expected(String... kv) {
        Map<String, String> m = new TreeMap<>();
        m.put("count/resourceclaims.resource.k8s.io", "1");
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i] + ".deviceclass.resource.k8s.io/devices", kv[i + 1]);
        }
        return m;
    }

    @Test
    void usageAsUpstream() {
        DeviceRequest valid = exactly("req-0", "gpu", "ExactCount", 1L);
        assertThat(usage(claim(List.of(valid)))).as("simple").isEqualTo(expected("gpu", "1"));
        List<DeviceRequest> many = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            many.add(valid);
        }
        assertThat(usage(claim(many))).as("many-requests").isEqualTo(expected("gpu", "5"));
        assertThat(usage(claim(List.of(exactly("req-0", "gpu", "ExactCount", 5L))))).as("count")
                .isEqualTo(expected("gpu", "5"));
        assertThat(usage(claim(List.of(exactly("req-0", "gpu", "All", 1L))))).as("all").isEqualTo(expected("gpu", "32"));
        assertThat(usage(claim(List.of(exactly("req-0", "gpu", "future-mode", 1L))))).as("unknown-count-mode")
                .isEqualTo(expected("gpu", "0"));
        DeviceRequest admin = exactly("req-0", "gpu", "ExactCount", 1L);
        admin.getExactly().setAdminAccess(true);
        assertThat(usage(claim(List.of(admin)))).as("admin").isEqualTo(expected("gpu", "1"));

        Object[] sub0 = { "subreq-0", "gpu", "ExactCount", 1L };
        assertThat(usage(claim(List.of(firstAvailable(sub0))))).as("prioritized-list").isEqualTo(expected("gpu", "1"));
        assertThat(usage(claim(List.of(firstAvailable(new Object[] { "subreq-0", "gpu", "ExactCount", 2L },
                new Object[] { "subreq-1", "gpu", "ExactCount", 1L })))))
                .as("prioritized-list-multiple-subrequests").isEqualTo(expected("gpu", "2"));
        assertThat(usage(claim(List.of(firstAvailable(sub0, new Object[] { "subreq-1", "gpu", "All", null })))))
                .as("prioritized-list-multiple-subrequests-allocation-mode-all").isEqualTo(expected("gpu", "32"));
        assertThat(usage(claim(List.of(firstAvailable(sub0, new Object[] { "subreq-1", "tpu", "All", null })))))
                .as("prioritized-list-multiple-subrequests-different-device-classes")
                .isEqualTo(expected("gpu", "1", "tpu", "32"));
    }

    @Test
    void matchingResources() {
        ResourceClaimEvaluator e = new ResourceClaimEvaluator(ns -> List.of());
        assertThat(e.matchingResources(List.of("count/resourceclaims.resource.k8s.io", "gpu.deviceclass.resource.k8s.io/devices",
                "count/pods", "resourceclaims", "requests.cpu")))
                .containsExactly("count/resourceclaims.resource.k8s.io", "gpu.deviceclass.resource.k8s.io/devices");
    }
}
