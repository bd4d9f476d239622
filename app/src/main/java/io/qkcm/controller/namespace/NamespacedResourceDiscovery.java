package io.qkcm.controller.namespace;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.APIGroupList;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * client-go's {@code ServerPreferredNamespacedResources}: every namespaced top-level resource of the
 * server, each group/resource once, in the group's preferred version when the group serves it in
 * several. Groups whose resource list cannot be fetched are reported in {@link Result#failedGroups}
 * (upstream's ErrGroupDiscoveryFailed) next to the partial result.
 */
final class NamespacedResourceDiscovery {

    /** One namespaced resource as discovered: its group version string and the API resource. */
    record Discovered(String groupVersion, APIResource resource) {
    }

    record Result(List<Discovered> resources, Map<String, String> failedGroups) {

        boolean failed() {
            return !failedGroups.isEmpty();
        }

        /** Upstream's ErrGroupDiscoveryFailed message. */
        String errorMessage() {
            List<String> groups = new ArrayList<>();
            failedGroups.forEach((gv, err) -> groups.add(gv + ": " + err));
            return "unable to retrieve the complete list of server APIs: " + String.join(", ", groups);
        }
    }

    private final KubernetesClient client;

    NamespacedResourceDiscovery(KubernetesClient client) {
        this.client = client;
    }

    Result discover() {
        // the legacy core group first, as client-go's ServerGroups does
        List<APIGroup> groups = new ArrayList<>();
        APIGroup core = new APIGroup();
        core.setName("");
        GroupVersionForDiscovery v1 = new GroupVersionForDiscovery("v1", "v1");
        core.setVersions(List.of(v1));
        core.setPreferredVersion(v1);
        groups.add(core);
        APIGroupList list = client.getApiGroups();
        if (list == null) {
            throw new IllegalStateException("the server could not find the requested resource (get /apis)");
        }
        if (list.getGroups() != null) {
            groups.addAll(list.getGroups());
        }

        Map<String, String> failed = new TreeMap<>();
        Map<String, APIResourceList> byGroupVersion = new LinkedHashMap<>();
        for (APIGroup g : groups) {
            for (GroupVersionForDiscovery v : nullSafe(g.getVersions())) {
                try {
                    APIResourceList resources = client.getApiResources(v.getGroupVersion());
                    if (resources == null) {
                        failed.put(v.getGroupVersion(), "the server could not find the requested resource");
                    } else {
                        byGroupVersion.put(v.getGroupVersion(), resources);
                    }
                } catch (RuntimeException e) {
                    failed.put(v.getGroupVersion(), NamespacedResourcesDeleter.apiMessage(e));
                }
            }
        }

        // group/resource -> (version, resource), preferring the group's preferred version
        Map<String, String[]> chosenVersion = new LinkedHashMap<>();
        Map<String, APIResource> chosen = new LinkedHashMap<>();
        for (APIGroup g : groups) {
            String preferred = g.getPreferredVersion() == null ? null : g.getPreferredVersion().getVersion();
            for (GroupVersionForDiscovery v : nullSafe(g.getVersions())) {
                APIResourceList resources = byGroupVersion.get(v.getGroupVersion());
                if (resources == null) {
                    continue;
                }
                for (APIResource r : nullSafe(resources.getResources())) {
                    if (r.getName().contains("/")) {
                        continue; // subresource
                    }
                    String gr = g.getName() + "/" + r.getName();
                    if (chosen.containsKey(gr) && !v.getVersion().equals(preferred)) {
                        continue;
                    }
                    chosenVersion.put(gr, new String[] { v.getGroupVersion() });
                    chosen.put(gr, r);
                }
            }
        }
        List<Discovered> out = new ArrayList<>();
        chosen.forEach((gr, r) -> {
            if (Boolean.TRUE.equals(r.getNamespaced())) {
                out.add(new Discovered(chosenVersion.get(gr)[0], r));
            }
        });
        return new Result(out, failed);
    }

    private static <T> List<T> nullSafe(List<T> l) {
        return l == null ? List.of() : l;
    }
}
