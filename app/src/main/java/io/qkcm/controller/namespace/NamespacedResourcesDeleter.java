package io.qkcm.controller.namespace;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.URLUtils;

/**
 * Upstream's namespacedResourcesDeleter (pkg/controller/namespace/deletion): for a namespace being
 * deleted, marks it Terminating, deletes every namespaced resource found by discovery (pods first,
 * as the locked-on OrderedNamespaceDeletion gate makes upstream do; delete-collection where the
 * resource supports it, else list and delete each), keeps the deletion conditions up to date, and
 * once nothing is left removes its finalizer through the namespace's {@code /finalize} subresource.
 */
final class NamespacedResourcesDeleter {

    private static final Logger LOG = Logger.getLogger(NamespacedResourcesDeleter.class);

    /** Default wait for finalizers on items pending deletion. */
    static final long FINALIZER_ESTIMATE_SECONDS = 15;

    private static final String PODS_KEY = "/v1/pods";

    private final KubernetesClient client;
    private final NamespacedResourceDiscovery discovery;
    private final String finalizerToken;
    /** group/version/resource + operation that the server does not support, from discovery's verbs. */
    private final Set<String> notSupported = java.util.concurrent.ConcurrentHashMap.newKeySet();

    NamespacedResourcesDeleter(KubernetesClient client, String finalizerToken) {
        this.client = client;
        this.discovery = new NamespacedResourceDiscovery(client);
        this.finalizerToken = finalizerToken;
    }

    /** Upstream's initOpCache: remembers which resources support neither list nor deletecollection. */
    void initOpCache() {
        NamespacedResourceDiscovery.Result result;
        try {
            result = discovery.discover();
        } catch (RuntimeException e) {
            throw new IllegalStateException("Unable to get any supported resources from server: " + e.getMessage(), e);
        }
        if (result.failed()) {
            LOG.errorf("unable to get all supported resources from server: %s", result.errorMessage());
        }
        if (result.resources().isEmpty()) {
            throw new IllegalStateException("Unable to get any supported resources from server");
        }
        for (NamespacedResourceDiscovery.Discovered d : result.resources()) {
            Gvr gvr;
            try {
                gvr = Gvr.of(d.groupVersion(), d.resource());
            } catch (IllegalArgumentException e) {
                LOG.errorf("Failed to parse GroupVersion %s, skipping: %s", d.groupVersion(), e.getMessage());
                continue;
            }
            List<String> verbs = d.resource().getVerbs() == null ? List.of() : d.resource().getVerbs();
            for (String op : List.of("list", "deletecollection")) {
                if (!verbs.contains(op)) {
                    notSupported.add(op + " " + gvr.key());
                }
            }
        }
    }

    /**
     * Deletes the namespace's content and finalizes it. Throws {@link ResourcesRemainingException}
     * when content is still going away, any other exception when a step failed.
     */
    void delete(String nsName) throws Exception {
        Namespace namespace = client.namespaces().withName(nsName).get();
        if (namespace == null || namespace.getMetadata().getDeletionTimestamp() == null) {
            return;
        }
        LOG.tracef("Namespace controller - syncNamespace %s, finalizerToken %s", nsName, finalizerToken);

        namespace = retryOnConflict(namespace, this::updateNamespaceStatus);
        if (namespace == null) {
            return; // gone
        }
        if (namespace.getMetadata().getDeletionTimestamp() == null) {
            return;
        }
        if (namespace.getSpec() == null || namespace.getSpec().getFinalizers() == null
                || namespace.getSpec().getFinalizers().isEmpty()) {
            return; // finalized
        }

        long estimate = deleteAllContent(namespace);
        if (estimate > 0) {
            throw new ResourcesRemainingException(estimate);
        }
        retryOnConflict(namespace, this::finalizeNamespace);
    }

    @FunctionalInterface
    private interface NamespaceUpdate {
        /** Returns the updated namespace, null if it is gone. */
        Namespace apply(Namespace ns) throws Exception;
    }

    /** Retries {@code fn} on conflicts with the live namespace; null if the namespace is gone. */
    private Namespace retryOnConflict(Namespace namespace, NamespaceUpdate fn) throws Exception {
        Namespace latest = namespace;
        while (true) {
            try {
                return fn.apply(latest);
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return null;
                }
                if (e.getCode() != 409) {
                    throw e;
                }
            }
            Namespace previous = latest;
            latest = client.namespaces().withName(previous.getMetadata().getName()).get();
            if (latest == null) {
                return null;
            }
            if (!previous.getMetadata().getUid().equals(latest.getMetadata().getUid())) {
                throw new IllegalStateException("namespace uid has changed across retries");
            }
        }
    }

    private Namespace updateNamespaceStatus(Namespace namespace) {
        if (namespace.getMetadata().getDeletionTimestamp() == null
                || (namespace.getStatus() != null && "Terminating".equals(namespace.getStatus().getPhase()))) {
            return namespace;
        }
        Namespace copy = new NamespaceBuilder(namespace).editOrNewStatus().withPhase("Terminating").endStatus().build();
        return client.namespaces().resource(copy).updateStatus();
    }

    /** PUT /api/v1/namespaces/{name}/finalize without this controller's finalizer token. */
    private Namespace finalizeNamespace(Namespace namespace) throws Exception {
        TreeSet<String> remaining = new TreeSet<>();
        for (String f : namespace.getSpec().getFinalizers()) {
            if (!finalizerToken.equals(f)) {
                remaining.add(f);
            }
        }
        Namespace finalize = new NamespaceBuilder().withMetadata(namespace.getMetadata())
                .withSpec(namespace.getSpec()).build();
        finalize.setApiVersion("v1");
        finalize.setKind("Namespace");
        finalize.getSpec().setFinalizers(new ArrayList<>(remaining));
        String url = URLUtils.join(client.getMasterUrl().toString(), "api", "v1", "namespaces",
                namespace.getMetadata().getName(), "finalize");
        HttpRequest request = client.getHttpClient().newHttpRequestBuilder().uri(url)
                .put("application/json", io.qkcm.runtime.Json.api().asJson(finalize)).build();
        HttpResponse<String> response;
        try {
            response = client.getHttpClient().sendAsync(request, String.class).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new KubernetesClientException("finalize namespace " + namespace.getMetadata().getName() + ": "
                    + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new KubernetesClientException("finalize namespace " + namespace.getMetadata().getName()
                    + ": timed out");
        }
        int code = response.code();
        if (code == 404) {
            return namespace; // removed already, so life is good
        }
        if (code < 200 || code >= 300) {
            throw new KubernetesClientException("finalize namespace " + namespace.getMetadata().getName()
                    + " failed: HTTP " + code + ": " + response.body(), code, null);
        }
        return io.qkcm.runtime.Json.api().unmarshal(response.body(), Namespace.class);
    }

    /** A resource to delete: group, version, plural name and kind. */
    record Gvr(String group, String version, String resource, String kind) {

        static Gvr of(String groupVersion, APIResource r) {
            String[] parts = groupVersion.split("/", -1);
            if (parts.length == 1 && !groupVersion.isEmpty()) {
                return new Gvr("", parts[0], r.getName(), r.getKind());
            }
            if (parts.length == 2) {
                return new Gvr(parts[0], parts[1], r.getName(), r.getKind());
            }
            throw new IllegalArgumentException("unexpected GroupVersion string: " + groupVersion);
        }

        String key() {
            return group + "/" + version + "/" + resource;
        }

        /** As Go formats a schema.GroupVersionResource with %v. */
        @Override
        public String toString() {
            return group + "/" + version + ", Resource=" + resource;
        }

        ResourceDefinitionContext context() {
            return new ResourceDefinitionContext.Builder().withGroup(group).withVersion(version).withPlural(resource)
                    .withKind(kind).withNamespaced(true).build();
        }
    }

    /** What is left of one resource after a deletion pass. */
    private record GvrDeletionMetadata(long finalizerEstimateSeconds, int numRemaining,
            Map<String, Integer> finalizersToNumRemaining) {

        static GvrDeletionMetadata estimateOnly(long estimate) {
            return new GvrDeletionMetadata(estimate, 0, Map.of());
        }
    }

    /** A failed step of deleting one resource's content; carries the estimate known so far. */
    private static final class ContentDeletionException extends Exception {
        final GvrDeletionMetadata metadata;

        ContentDeletionException(String message, GvrDeletionMetadata metadata) {
            super(message);
            this.metadata = metadata;
        }
    }

    private long deleteAllContent(Namespace ns) throws Exception {
        String namespace = ns.getMetadata().getName();
        Instant deletedAt = Instant.parse(ns.getMetadata().getDeletionTimestamp());
        List<String> errs = new ArrayList<>();
        NamespaceConditionUpdater conditions = new NamespaceConditionUpdater();
        long estimate = 0;
        LOG.debugf("namespace controller - deleteAllContent namespace %s", namespace);

        NamespacedResourceDiscovery.Result resources;
        try {
            resources = discovery.discover();
        } catch (RuntimeException e) {
            resources = new NamespacedResourceDiscovery.Result(List.of(), Map.of());
            errs.add(apiMessage(e));
            conditions.processDiscoverResourcesErr(apiMessage(e), -1);
        }
        if (resources.failed()) {
            // discovery errors are not fatal: delete what was discovered, report and retry the rest
            errs.add(resources.errorMessage());
            conditions.processDiscoverResourcesErr(resources.errorMessage(), resources.failedGroups().size());
        }
        Map<String, Gvr> gvrs = new LinkedHashMap<>();
        List<String> parseErrors = new ArrayList<>();
        for (NamespacedResourceDiscovery.Discovered d : resources.resources()) {
            List<String> verbs = d.resource().getVerbs() == null ? List.of() : d.resource().getVerbs();
            if (!verbs.contains("delete")) {
                continue;
            }
            try {
                Gvr gvr = Gvr.of(d.groupVersion(), d.resource());
                gvrs.put(gvr.key(), gvr);
            } catch (IllegalArgumentException e) {
                parseErrors.add(e.getMessage());
            }
        }
        if (!parseErrors.isEmpty()) {
            String msg = aggregate(parseErrors);
            errs.add(msg);
            conditions.processGroupVersionErr(msg);
        }

        Map<String, Integer> gvrToNumRemaining = new LinkedHashMap<>();
        Map<String, Integer> finalizersToNumRemaining = new LinkedHashMap<>();

        Gvr pods = gvrs.get(PODS_KEY);
        if (pods != null) {
            // OrderedNamespaceDeletion (GA, locked on in v1.34): pods go first
            GvrDeletionMetadata m;
            try {
                m = deleteAllContentForGvr(pods, namespace, deletedAt);
            } catch (ContentDeletionException e) {
                m = e.metadata;
                errs.add("failed to delete pods for namespace: " + namespace + ", err: " + e.getMessage());
                conditions.processDeleteContentErr(e.getMessage());
            }
            estimate = Math.max(estimate, m.finalizerEstimateSeconds());
            if (m.numRemaining() > 0) {
                gvrToNumRemaining.put(resourceDotGroup(pods), m.numRemaining());
                m.finalizersToNumRemaining().forEach((f, n) -> {
                    if (n != 0) {
                        finalizersToNumRemaining.merge(f, n, Integer::sum);
                    }
                });
                LOG.tracef("Namespace controller - pods still remain in %s, delaying deletion of other resources",
                        namespace);
                writeConditions(ns, conditions);
                if (!errs.isEmpty()) {
                    throw new NamespaceDeletionException(aggregate(errs));
                }
                return estimate;
            }
        }

        for (Gvr gvr : gvrs.values()) {
            if (gvr == pods) {
                continue;
            }
            GvrDeletionMetadata m;
            try {
                m = deleteAllContentForGvr(gvr, namespace, deletedAt);
            } catch (ContentDeletionException e) {
                // hold on to the error but go on with the other resources
                m = e.metadata;
                errs.add(e.getMessage());
                conditions.processDeleteContentErr(e.getMessage());
            }
            estimate = Math.max(estimate, m.finalizerEstimateSeconds());
            if (m.numRemaining() > 0) {
                gvrToNumRemaining.put(resourceDotGroup(gvr), m.numRemaining());
                m.finalizersToNumRemaining().forEach((f, n) -> {
                    if (n != 0) {
                        finalizersToNumRemaining.merge(f, n, Integer::sum);
                    }
                });
            }
        }
        conditions.processContentTotals(gvrToNumRemaining, finalizersToNumRemaining);
        // always written: a condition that went back to "ok" must say so
        writeConditions(ns, conditions);
        LOG.debugf("namespace controller - deleteAllContent namespace %s estimate %d errors %s", namespace, estimate,
                errs);
        if (!errs.isEmpty()) {
            throw new NamespaceDeletionException(aggregate(errs));
        }
        return estimate;
    }

    private void writeConditions(Namespace ns, NamespaceConditionUpdater conditions) {
        if (conditions.update(ns)) {
            try {
                Namespace updated = client.namespaces().resource(ns).updateStatus();
                ns.getMetadata().setResourceVersion(updated.getMetadata().getResourceVersion());
            } catch (KubernetesClientException e) {
                LOG.errorf("couldn't update status condition for namespace %s: %s", ns.getMetadata().getName(),
                        apiMessage(e));
            }
        }
    }

    private GvrDeletionMetadata deleteAllContentForGvr(Gvr gvr, String namespace, Instant deletedAt)
            throws ContentDeletionException {
        LOG.tracef("Namespace controller - deleteAllContentForGroupVersionResource %s %s", namespace, gvr);
        long estimate;
        try {
            estimate = estimateGracefulTermination(gvr, namespace, deletedAt);
        } catch (KubernetesClientException e) {
            throw new ContentDeletionException(apiMessage(e), GvrDeletionMetadata.estimateOnly(0));
        }

        try {
            boolean deleteCollectionSupported = deleteCollection(gvr, namespace);
            if (!deleteCollectionSupported) {
                deleteEachItem(gvr, namespace);
            }
        } catch (KubernetesClientException e) {
            throw new ContentDeletionException(apiMessage(e), GvrDeletionMetadata.estimateOnly(estimate));
        }

        // verify nothing is left; items remaining are fine while the estimate is non-zero
        List<GenericKubernetesResource> remaining;
        try {
            remaining = listCollection(gvr, namespace);
        } catch (KubernetesClientException e) {
            throw new ContentDeletionException(apiMessage(e), GvrDeletionMetadata.estimateOnly(estimate));
        }
        if (remaining == null) {
            return GvrDeletionMetadata.estimateOnly(estimate);
        }
        if (remaining.isEmpty()) {
            return new GvrDeletionMetadata(0, 0, Map.of());
        }
        Map<String, Integer> finalizers = new LinkedHashMap<>();
        for (GenericKubernetesResource item : remaining) {
            List<String> fs = item.getMetadata().getFinalizers();
            if (fs != null) {
                for (String f : fs) {
                    finalizers.merge(f, 1, Integer::sum);
                }
            }
        }
        if (estimate != 0) {
            return new GvrDeletionMetadata(estimate, remaining.size(), finalizers);
        }
        if (!finalizers.isEmpty()) {
            // items with finalizers are normal: give the garbage collector time
            return new GvrDeletionMetadata(FINALIZER_ESTIMATE_SECONDS, remaining.size(), finalizers);
        }
        throw new ContentDeletionException(
                "unexpected items still remain in namespace: " + namespace + " for gvr: " + gvr,
                new GvrDeletionMetadata(estimate, remaining.size(), Map.of()));
    }

    /** True if the server supports deletecollection for {@code gvr}; throws if it failed anyway. */
    private boolean deleteCollection(Gvr gvr, String namespace) {
        if (notSupported.contains("deletecollection " + gvr.key())) {
            return false;
        }
        // background propagation: the namespace controller purges everything itself, so the garbage
        // collector must not add the orphan finalizer
        try {
            client.genericKubernetesResources(gvr.context()).inNamespace(namespace)
                    .withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 405 || e.getCode() == 404) {
                return false;
            }
            throw e;
        }
    }

    /** The items, or null if the server does not support list for {@code gvr}. */
    private List<GenericKubernetesResource> listCollection(Gvr gvr, String namespace) {
        if (notSupported.contains("list " + gvr.key())) {
            return null;
        }
        try {
            GenericKubernetesResourceList list = client.genericKubernetesResources(gvr.context())
                    .inNamespace(namespace).list();
            return list.getItems() == null ? List.of() : list.getItems();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 405 || e.getCode() == 404) {
                return null;
            }
            throw e;
        }
    }

    private void deleteEachItem(Gvr gvr, String namespace) {
        List<GenericKubernetesResource> items = listCollection(gvr, namespace);
        if (items == null) {
            return;
        }
        for (GenericKubernetesResource item : items) {
            try {
                client.genericKubernetesResources(gvr.context()).inNamespace(namespace)
                        .withName(item.getMetadata().getName())
                        .withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404 && e.getCode() != 405) {
                    throw e;
                }
            }
        }
    }

    private long estimateGracefulTermination(Gvr gvr, String namespace, Instant deletedAt) {
        long estimate = 0;
        if (gvr.group().isEmpty() && gvr.resource().equals("pods")) {
            estimate = estimateGracefulTerminationForPods(namespace);
        }
        Duration since = Duration.between(deletedAt, Instant.now());
        if (since.compareTo(Duration.ofSeconds(estimate)) >= 0) {
            estimate = 0;
        }
        return estimate;
    }

    private long estimateGracefulTerminationForPods(String namespace) {
        long estimate = 0;
        for (Pod pod : client.pods().inNamespace(namespace).list().getItems()) {
            String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
            if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
                continue;
            }
            Long grace = pod.getSpec() == null ? null : pod.getSpec().getTerminationGracePeriodSeconds();
            if (grace != null && grace > estimate) {
                estimate = grace;
            }
        }
        return estimate;
    }

    private static String resourceDotGroup(Gvr gvr) {
        return gvr.resource() + "." + gvr.group();
    }

    /** As utilerrors.NewAggregate formats several errors. */
    private static String aggregate(List<String> errs) {
        Set<String> seen = new HashSet<>();
        List<String> unique = new ArrayList<>();
        for (String e : errs) {
            if (seen.add(e)) {
                unique.add(e);
            }
        }
        if (unique.size() == 1) {
            return unique.get(0);
        }
        return "[" + String.join(", ", unique) + "]";
    }

    /** The API server's message for a failed request, as Go's StatusError prints it. */
    static String apiMessage(Exception e) {
        if (e instanceof KubernetesClientException kce && kce.getStatus() != null
                && kce.getStatus().getMessage() != null) {
            return kce.getStatus().getMessage();
        }
        return String.valueOf(e.getMessage());
    }

    /** A deletion pass that failed; the controller retries with backoff. */
    static final class NamespaceDeletionException extends Exception {
        NamespaceDeletionException(String message) {
            super(message);
        }
    }
}
