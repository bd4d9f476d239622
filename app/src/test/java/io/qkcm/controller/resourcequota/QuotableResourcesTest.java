package io.qkcm.controller.resourcequota;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.qkcm.runtime.informers.ApiDiscovery;
import io.qkcm.runtime.informers.GroupVersionResource;

/** GetQuotableResources and printDiff (resource_quota_controller_test.go's discovery cases). */
class QuotableResourcesTest {

    private static final Set<String> ALL = Set.of("create", "list", "watch", "delete", "get");

    private static ApiDiscovery.ApiResource r(String group, String version, String resource, boolean namespaced,
            Set<String> verbs) {
        return new ApiDiscovery.ApiResource(new GroupVersionResource(group, version, resource), "K", namespaced, verbs);
    }

    @Test
    void namespacedResourcesWithCreateListWatchDeleteOfThePreferredVersion() {
        ApiDiscovery.Snapshot snapshot = new ApiDiscovery.Snapshot(List.of(
                r("", "v1", "pods", true, ALL),
                r("", "v1", "nodes", false, ALL),
                r("", "v1", "bindings", true, Set.of("create")),
                r("apps", "v1", "deployments", true, ALL),
                r("example.com", "v1", "widgets", true, ALL),
                r("example.com", "v1beta1", "widgets", true, ALL),
                r("example.com", "v1", "readonly", true, Set.of("list", "watch", "get"))),
                Map.of("", "v1", "apps", "v1", "example.com", "v1"), Set.of());
        assertThat(ResourceQuotaController.quotableResources(snapshot)).containsExactlyInAnyOrder(
                new GroupVersionResource("", "v1", "pods"), new GroupVersionResource("apps", "v1", "deployments"),
                new GroupVersionResource("example.com", "v1", "widgets"));
    }

    @Test
    void printDiff() {
        var pods = new GroupVersionResource("", "v1", "pods");
        var widgets = new GroupVersionResource("example.com", "v1", "widgets");
        assertThat(ResourceQuotaController.printDiff(Set.of(pods), Set.of(widgets)))
                .isEqualTo("added: [example.com/v1, Resource=widgets], removed: [v1, Resource=pods]");
    }
}
