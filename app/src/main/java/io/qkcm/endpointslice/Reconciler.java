package io.qkcm.endpointslice;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.endpointslice.metrics.EndpointSliceMetrics;
import io.qkcm.endpointslice.metrics.MetricsCache;
import io.qkcm.endpointslice.topologycache.EventBuilder;
import io.qkcm.endpointslice.topologycache.SliceInfo;
import io.qkcm.endpointslice.topologycache.TopologyCache;
import io.qkcm.endpointslice.topologycache.TopologyUtils;
import io.qkcm.endpointslice.trafficdist.TrafficDist;
import io.qkcm.endpointslice.util.EndpointSet;
import io.qkcm.endpointslice.util.EndpointSliceTracker;
import io.qkcm.endpointslice.util.EndpointSliceUtil;

/**
 * k8s.io/endpointslice Reconciler: turns the pods a Service selects into EndpointSlices, one set per
 * address type and per distinct port mapping, with as few writes as possible — endpoints are updated in
 * place in the slices that hold them, new ones first fill slices already being written, then the
 * unchanged slice that ends up closest to full, and only then new slices; a slice left without
 * endpoints is deleted (or reused by a create); a Service without endpoints keeps one placeholder slice.
 */
public final class Reconciler {

    private static final Logger LOG = Logger.getLogger(Reconciler.class);

    private final EndpointSliceWriter client;
    private final Function<String, Node> nodeLister;
    private final int maxEndpointsPerSlice;
    private final EndpointSliceTracker endpointSliceTracker;
    private final MetricsCache metricsCache;
    private final EndpointSliceMetrics metrics;
    private final TopologyCache topologyCache;
    private final boolean trafficDistributionEnabled;
    private final boolean preferSameTrafficDistribution;
    private final EventRecorder eventRecorder;
    private final String controllerName;

    /**
     * @param nodeLister Node by name from the cache, null when absent
     * @param topologyCache null when topology-aware hints are off (feature gate TopologyAwareHints)
     */
    public Reconciler(EndpointSliceWriter client, Function<String, Node> nodeLister, int maxEndpointsPerSlice,
            EndpointSliceTracker endpointSliceTracker, TopologyCache topologyCache, EventRecorder eventRecorder,
            String controllerName, boolean trafficDistributionEnabled, boolean preferSameTrafficDistribution,
            EndpointSliceMetrics metrics) {
        this.client = client;
        this.nodeLister = nodeLister;
        this.maxEndpointsPerSlice = maxEndpointsPerSlice;
        this.endpointSliceTracker = endpointSliceTracker;
        this.metrics = metrics;
        this.metricsCache = new MetricsCache(maxEndpointsPerSlice, metrics);
        this.topologyCache = topologyCache;
        this.eventRecorder = eventRecorder;
        this.controllerName = controllerName;
        this.trafficDistributionEnabled = trafficDistributionEnabled;
        this.preferSameTrafficDistribution = preferSameTrafficDistribution;
    }

    /** Whether the Service's trafficDistribution is set and one this cluster acts on. */
    boolean validTrafficDistribution(String trafficDistribution) {
        if (trafficDistribution == null || !trafficDistributionEnabled) {
            return false;
        }
        if (TrafficDist.PREFER_CLOSE.equals(trafficDistribution)) {
            return true;
        }
        if (!preferSameTrafficDistribution) {
            return false;
        }
        return TrafficDist.PREFER_SAME_ZONE.equals(trafficDistribution)
                || TrafficDist.PREFER_SAME_NODE.equals(trafficDistribution);
    }

    /**
     * Brings the Service's slices in line with {@code pods}. {@code triggerTime} null means no trigger
     * time (the annotation is removed). Errors of the address types are aggregated and thrown.
     */
    public void reconcile(Service service, List<Pod> pods, List<EndpointSlice> existingSlices, Instant triggerTime) {
        List<EndpointSlice> slicesToDelete = new ArrayList<>();
        List<Exception> errs = new ArrayList<>();
        Map<String, List<EndpointSlice>> slicesByAddressType = new LinkedHashMap<>();
        Set<String> supported = ReconcilerUtils.addressTypesForService(service);

        for (EndpointSlice existing : existingSlices) {
            // a family the Service no longer has
            if (!supported.contains(existing.getAddressType())) {
                if (topologyCache != null) {
                    try {
                        topologyCache.removeHints(ReconcilerUtils.serviceControllerKey(existing), existing.getAddressType());
                    } catch (IllegalArgumentException e) {
                        LOG.infof("Couldn't get key to remove EndpointSlice %s from topology cache: %s",
                                existing.getMetadata().getName(), e.getMessage());
                    }
                }
                slicesToDelete.add(existing);
                continue;
            }
            slicesByAddressType.computeIfAbsent(existing.getAddressType(), k -> new ArrayList<>()).add(existing);
        }

        for (String addressType : supported) {
            try {
                reconcileByAddressType(service, pods, slicesByAddressType.getOrDefault(addressType, List.of()),
                        triggerTime, addressType);
            } catch (Exception e) {
                errs.add(e);
            }
        }

        for (EndpointSlice slice : slicesToDelete) {
            try {
                client.delete(service.getMetadata().getNamespace(), slice.getMetadata().getName());
                endpointSliceTracker.expectDeletion(slice);
                metrics.change("delete");
            } catch (RuntimeException e) {
                errs.add(new RuntimeException(String.format("error deleting %s EndpointSlice for Service %s/%s: %s",
                        slice.getMetadata().getName(), service.getMetadata().getNamespace(),
                        service.getMetadata().getName(), apiMessage(e)), e));
            }
        }
        AggregateException.throwIfAny(errs);
    }

    /** The ports and address type slices are grouped by. */
    record EndpointMeta(List<EndpointPort> ports, String addressType) {
    }

    private void reconcileByAddressType(Service service, List<Pod> pods, List<EndpointSlice> existingSlices,
            Instant triggerTime, String addressType) {
        List<Exception> errs = new ArrayList<>();
        List<EndpointSlice> slicesToCreate = new ArrayList<>();
        List<EndpointSlice> slicesToUpdate = new ArrayList<>();
        List<EndpointSlice> slicesToDelete = new ArrayList<>();
        List<EventBuilder> events = new ArrayList<>();
        String ns = service.getMetadata().getNamespace();
        String svcName = service.getMetadata().getName();

        // existing state
        Map<String, List<EndpointSlice>> existingSlicesByPortMap = new LinkedHashMap<>();
        for (EndpointSlice existing : existingSlices) {
            if (ReconcilerUtils.ownedBy(existing, service)) {
                List<EndpointPort> ports = existing.getPorts() == null ? new ArrayList<>() : existing.getPorts();
                String key = EndpointSliceUtil.portMapKey(ports);
                existingSlicesByPortMap.computeIfAbsent(key, k -> new ArrayList<>()).add(existing);
            } else {
                slicesToDelete.add(existing);
            }
        }

        // desired state
        Map<String, EndpointMeta> desiredMetaByPortMap = new LinkedHashMap<>();
        Map<String, EndpointSet> desiredEndpointsByPortMap = new LinkedHashMap<>();
        for (Pod pod : pods) {
            if (!EndpointSliceUtil.shouldPodBeInEndpoints(pod, true)) {
                continue;
            }
            List<EndpointPort> endpointPorts = ReconcilerUtils.endpointPorts(service, pod);
            String key = EndpointSliceUtil.portMapKey(endpointPorts);
            desiredEndpointsByPortMap.computeIfAbsent(key, k -> new EndpointSet());
            desiredMetaByPortMap.computeIfAbsent(key, k -> new EndpointMeta(endpointPorts, addressType));

            String nodeName = pod.getSpec().getNodeName() == null ? "" : pod.getSpec().getNodeName();
            Node node = nodeLister.apply(nodeName);
            if (node == null) {
                // Requeue so a Node that shows up later is seen, but publish the slice without the pod
                // meanwhile; a Service publishing not-ready addresses keeps the pod.
                if (!ReconcilerUtils.publishNotReadyAddresses(service)) {
                    LOG.infof("skipping Pod %s/%s for Service %s/%s, Node %s not found", pod.getMetadata().getNamespace(),
                            pod.getMetadata().getName(), ns, svcName, nodeName);
                    errs.add(new RuntimeException(String.format("skipping Pod %s for Service %s/%s: Node %s Not Found",
                            pod.getMetadata().getName(), ns, svcName, nodeName)));
                    continue;
                }
            }
            Endpoint endpoint = ReconcilerUtils.podToEndpoint(pod, node, service, addressType);
            if (!endpoint.getAddresses().isEmpty()) {
                desiredEndpointsByPortMap.get(key).insert(endpoint);
            }
        }

        MetricsCache.ServicePortCache spMetrics = new MetricsCache.ServicePortCache();
        int totalAdded = 0;
        int totalRemoved = 0;

        for (Map.Entry<String, EndpointSet> e : desiredEndpointsByPortMap.entrySet()) {
            String portMap = e.getKey();
            int numEndpoints = e.getValue().size();
            List<EndpointSlice> existingForPortMap = existingSlicesByPortMap.getOrDefault(portMap, List.of());
            PortMappingResult r = reconcileByPortMapping(service, existingForPortMap, e.getValue(),
                    desiredMetaByPortMap.get(portMap));
            totalAdded += r.added();
            totalRemoved += r.removed();
            spMetrics.set(portMap, new MetricsCache.EfficiencyInfo(numEndpoints,
                    existingForPortMap.size() + r.toCreate().size() - r.toDelete().size()));
            slicesToCreate.addAll(r.toCreate());
            slicesToUpdate.addAll(r.toUpdate());
            slicesToDelete.addAll(r.toDelete());
        }

        // port mappings no longer wanted at all
        existingSlicesByPortMap.forEach((portMap, slices) -> {
            if (!desiredEndpointsByPortMap.containsKey(portMap)) {
                slicesToDelete.addAll(slices);
            }
        });

        // a Service without endpoints keeps a placeholder slice
        if (existingSlices.size() == slicesToDelete.size() && slicesToCreate.isEmpty()) {
            EndpointSlice placeholder = ReconcilerUtils.newEndpointSlice(service, new ArrayList<>(), addressType,
                    controllerName);
            if (slicesToDelete.size() == 1 && placeholderEqual(slicesToDelete.get(0), placeholder)) {
                // it is already there: neither delete nor recreate it
                slicesToDelete.clear();
            } else {
                slicesToCreate.add(placeholder);
            }
            spMetrics.set(EndpointSliceUtil.portMapKey(placeholder.getPorts()), new MetricsCache.EfficiencyInfo(0, 1));
        }

        metrics.endpointsAddedPerSync(totalAdded);
        metrics.endpointsRemovedPerSync(totalRemoved);

        String serviceKey = ns + "/" + svcName;
        metricsCache.updateServicePortCache(serviceKey, spMetrics);

        // Hints are per address type: one family may get hints while the other does not.
        SliceInfo si = new SliceInfo(serviceKey, addressType, slicesToCreate, slicesToUpdate,
                ReconcilerUtils.unchangedSlices(existingSlices, slicesToUpdate, slicesToDelete));

        Map<String, String> annotations = service.getMetadata().getAnnotations();
        String trafficDistribution = service.getSpec().getTrafficDistribution();
        boolean canUseTrafficDistribution = validTrafficDistribution(trafficDistribution)
                && !ReconcilerUtils.hintsEnabled(annotations);

        if (topologyCache != null && ReconcilerUtils.hintsEnabled(annotations)) {
            // hints from the topology annotation
            TopologyCache.Result r = topologyCache.addHints(si);
            slicesToCreate = r.toCreate();
            slicesToUpdate = r.toUpdate();
            events = new ArrayList<>(r.events());
        } else {
            // Not hinting by annotation: forget any hints it gave before, and remove hints from the slices
            // unless trafficDistribution is about to set its own.
            if (topologyCache != null) {
                if (topologyCache.hasPopulatedHints(si.serviceKey)) {
                    LOG.infof("TopologyAwareHints annotation has changed, removing hints (key %s, addressType %s)",
                            si.serviceKey, si.addressType);
                    events.add(new EventBuilder("Warning", EventBuilder.REASON_DISABLED, EventBuilder
                            .formatWithAddressType(EventBuilder.TOPOLOGY_AWARE_HINTS_DISABLED, si.addressType)));
                }
                topologyCache.removeHints(si.serviceKey, addressType);
            }
            if (!canUseTrafficDistribution) {
                TopologyUtils.Slices s = TopologyUtils.removeHintsFromSlices(si);
                slicesToCreate = s.toCreate();
                slicesToUpdate = s.toUpdate();
            }
        }

        if (canUseTrafficDistribution) {
            metricsCache.updateTrafficDistributionForService(serviceKey, trafficDistribution);
            TrafficDist.Result r = TrafficDist.reconcileHints(trafficDistribution, slicesToCreate, slicesToUpdate,
                    ReconcilerUtils.unchangedSlices(existingSlices, slicesToUpdate, slicesToDelete));
            slicesToCreate = r.toCreate();
            slicesToUpdate = r.toUpdate();
        } else {
            metricsCache.updateTrafficDistributionForService(serviceKey, null);
        }

        try {
            finalize(service, slicesToCreate, slicesToUpdate, slicesToDelete, triggerTime);
        } catch (Exception e) {
            errs.add(e);
        }
        for (EventBuilder event : events) {
            eventRecorder.event(service, event.eventType(), event.reason(), event.message());
        }
        AggregateException.throwIfAny(errs);
    }

    /**
     * upstream's placeholderSliceCompare: namespace, labels, address type, ports and endpoints (nil and
     * empty alike); names, owners and annotations are not compared.
     */
    static boolean placeholderEqual(EndpointSlice a, EndpointSlice b) {
        return Objects.equals(a.getMetadata().getNamespace(), b.getMetadata().getNamespace())
                && Objects.equals(orEmpty(a.getMetadata().getLabels()), orEmpty(b.getMetadata().getLabels()))
                && Objects.equals(a.getAddressType(), b.getAddressType())
                && Objects.equals(orEmpty(a.getPorts()), orEmpty(b.getPorts()))
                && Objects.equals(orEmpty(a.getEndpoints()), orEmpty(b.getEndpoints()));
    }

    private static <K, V> Map<K, V> orEmpty(Map<K, V> m) {
        return m == null ? Map.of() : m;
    }

    private static <T> List<T> orEmpty(List<T> l) {
        return l == null ? List.of() : l;
    }

    /** Writes the plan: creates turned into updates of slices that would be deleted, then the rest. */
    private void finalize(Service service, List<EndpointSlice> toCreate, List<EndpointSlice> toUpdate,
            List<EndpointSlice> toDelete, Instant triggerTime) {
        List<EndpointSlice> slicesToCreate = new ArrayList<>(toCreate);
        List<EndpointSlice> slicesToUpdate = new ArrayList<>(toUpdate);
        List<EndpointSlice> slicesToDelete = new ArrayList<>(toDelete);
        String ns = service.getMetadata().getNamespace();
        String svcName = service.getMetadata().getName();

        for (int i = 0; i < slicesToDelete.size();) {
            if (slicesToCreate.isEmpty()) {
                break;
            }
            EndpointSlice sliceToDelete = slicesToDelete.get(i);
            EndpointSlice slice = slicesToCreate.get(slicesToCreate.size() - 1);
            // Only reuse a slice of this very Service (not one of an old Service of the same name the
            // GC is removing) and of the same, immutable, address type.
            if (Objects.equals(sliceToDelete.getAddressType(), slice.getAddressType())
                    && ReconcilerUtils.ownedBy(sliceToDelete, service)) {
                slice.getMetadata().setName(sliceToDelete.getMetadata().getName());
                // an update must carry the stored object's identity and version
                slice.getMetadata().setResourceVersion(sliceToDelete.getMetadata().getResourceVersion());
                slice.getMetadata().setUid(sliceToDelete.getMetadata().getUid());
                slicesToCreate.remove(slicesToCreate.size() - 1);
                slicesToUpdate.add(slice);
                slicesToDelete.remove(i);
            } else {
                i++;
            }
        }

        // No creates while the Service is being deleted: the GC would race us removing them.
        if (service.getMetadata().getDeletionTimestamp() == null) {
            for (EndpointSlice slice : slicesToCreate) {
                ReconcilerUtils.addTriggerTimeAnnotation(slice, triggerTime);
                EndpointSlice created;
                try {
                    created = client.create(slice);
                } catch (RuntimeException e) {
                    // creates keep failing in a terminating namespace: drop the item
                    if (hasStatusCause(e, "NamespaceTerminating")) {
                        return;
                    }
                    if (ApiErrors.isOutcomeUnknown(e)) {
                        // the slice may exist: no creation for this Service until that is settled
                        endpointSliceTracker.markCreateUncertain(ns, svcName);
                    }
                    throw new RuntimeException(String.format("failed to create EndpointSlice for Service %s/%s: %s",
                            ns, svcName, apiMessage(e)), e);
                }
                endpointSliceTracker.update(created);
                metrics.change("create");
            }
        }

        for (EndpointSlice slice : slicesToUpdate) {
            ReconcilerUtils.addTriggerTimeAnnotation(slice, triggerTime);
            EndpointSlice updated;
            try {
                updated = client.update(slice);
            } catch (RuntimeException e) {
                throw new RuntimeException(String.format("failed to update %s EndpointSlice for Service %s/%s: %s",
                        slice.getMetadata().getName(), ns, svcName, apiMessage(e)), e);
            }
            endpointSliceTracker.update(updated);
            metrics.change("update");
        }

        for (EndpointSlice slice : slicesToDelete) {
            try {
                client.delete(ns, slice.getMetadata().getName());
            } catch (RuntimeException e) {
                throw new RuntimeException(String.format("failed to delete %s EndpointSlice for Service %s/%s: %s",
                        slice.getMetadata().getName(), ns, svcName, apiMessage(e)), e);
            }
            endpointSliceTracker.expectDeletion(slice);
            metrics.change("delete");
        }

        Map<String, String> annotations = service.getMetadata().getAnnotations();
        String topologyLabel = topologyCache != null && ReconcilerUtils.hintsEnabled(annotations) ? "Auto" : "Disabled";
        String trafficDistribution = "";
        if (validTrafficDistribution(service.getSpec().getTrafficDistribution())
                && !ReconcilerUtils.hintsEnabled(annotations)) {
            trafficDistribution = service.getSpec().getTrafficDistribution();
        }
        metrics.endpointSlicesChangedPerSync(topologyLabel, trafficDistribution,
                slicesToCreate.size() + slicesToUpdate.size() + slicesToDelete.size());
    }

    record PortMappingResult(List<EndpointSlice> toCreate, List<EndpointSlice> toUpdate, List<EndpointSlice> toDelete,
            int added, int removed) {
    }

    /**
     * The slices to create, update and delete for one port mapping:
     * 1. in existing slices, drop endpoints no longer desired and refresh changed ones (and labels);
     * 2. fill the slices already being updated, fullest first, with the remaining desired endpoints;
     * 3. put what is left in the unchanged slice that ends up closest to full, else in new slices.
     */
    PortMappingResult reconcileByPortMapping(Service service, List<EndpointSlice> existingSlices, EndpointSet desiredSet,
            EndpointMeta endpointMeta) {
        Map<String, EndpointSlice> slicesByName = new LinkedHashMap<>();
        Set<String> sliceNamesUnchanged = new LinkedHashSet<>();
        Set<String> sliceNamesToUpdate = new LinkedHashSet<>();
        Set<String> sliceNamesToDelete = new LinkedHashSet<>();
        int numRemoved = 0;

        // 1.
        for (EndpointSlice existing : existingSlices) {
            String name = existing.getMetadata().getName();
            slicesByName.put(name, existing);
            List<Endpoint> newEndpoints = new ArrayList<>();
            boolean endpointUpdated = false;
            List<Endpoint> existingEndpoints = existing.getEndpoints() == null ? List.of() : existing.getEndpoints();
            for (Endpoint endpoint : existingEndpoints) {
                Endpoint got = desiredSet.get(endpoint);
                if (got != null) {
                    newEndpoints.add(got);
                    if (!EndpointSliceUtil.endpointsEqualBeyondHash(got, endpoint)) {
                        endpointUpdated = true;
                    }
                    // placed: no longer to be handled
                    desiredSet.delete(endpoint);
                }
            }

            ReconcilerUtils.Labels labels = ReconcilerUtils.endpointSliceLabels(existing, service, controllerName);

            if (endpointUpdated || existingEndpoints.size() != newEndpoints.size()) {
                if (existingEndpoints.size() > newEndpoints.size()) {
                    numRemoved += existingEndpoints.size() - newEndpoints.size();
                }
                if (newEndpoints.isEmpty()) {
                    sliceNamesToDelete.add(name);
                } else {
                    EndpointSlice copy = deepCopy(existing);
                    copy.setEndpoints(newEndpoints);
                    copy.getMetadata().setLabels(labels.labels());
                    slicesByName.put(name, copy);
                    sliceNamesToUpdate.add(name);
                }
            } else if (labels.updated()) {
                EndpointSlice copy = deepCopy(existing);
                copy.getMetadata().setLabels(labels.labels());
                slicesByName.put(name, copy);
                sliceNamesToUpdate.add(name);
            } else {
                // may take leftover endpoints in step 3
                sliceNamesUnchanged.add(name);
            }
        }

        int numAdded = desiredSet.size();

        // 2.
        if (desiredSet.size() > 0 && !sliceNamesToUpdate.isEmpty()) {
            List<EndpointSlice> slices = new ArrayList<>();
            for (String name : sliceNamesToUpdate) {
                slices.add(slicesByName.get(name));
            }
            slices.sort(Comparator.comparingInt(ReconcilerUtils::size).reversed());
            for (EndpointSlice slice : slices) {
                while (desiredSet.size() > 0 && slice.getEndpoints().size() < maxEndpointsPerSlice) {
                    slice.getEndpoints().add(desiredSet.popAny());
                }
            }
        }

        // 3.
        List<EndpointSlice> slicesToCreate = new ArrayList<>();
        while (desiredSet.size() > 0) {
            EndpointSlice sliceToFill = null;
            if (desiredSet.size() < maxEndpointsPerSlice && !sliceNamesUnchanged.isEmpty()) {
                List<EndpointSlice> unchanged = new ArrayList<>();
                for (String name : sliceNamesUnchanged) {
                    unchanged.add(slicesByName.get(name));
                }
                sliceToFill = ReconcilerUtils.sliceToFill(unchanged, desiredSet.size(), maxEndpointsPerSlice);
            }
            if (sliceToFill == null) {
                sliceToFill = ReconcilerUtils.newEndpointSlice(service, endpointMeta.ports(), endpointMeta.addressType(),
                        controllerName);
            } else {
                sliceToFill = deepCopy(sliceToFill);
                slicesByName.put(sliceToFill.getMetadata().getName(), sliceToFill);
            }
            if (sliceToFill.getEndpoints() == null) {
                sliceToFill.setEndpoints(new ArrayList<>());
            }
            while (desiredSet.size() > 0 && sliceToFill.getEndpoints().size() < maxEndpointsPerSlice) {
                sliceToFill.getEndpoints().add(desiredSet.popAny());
            }
            // new slices have no name yet
            String name = sliceToFill.getMetadata().getName();
            if (name != null && !name.isEmpty()) {
                sliceNamesToUpdate.add(name);
                sliceNamesUnchanged.remove(name);
            } else {
                slicesToCreate.add(sliceToFill);
            }
        }

        List<EndpointSlice> slicesToUpdate = new ArrayList<>();
        for (String name : sliceNamesToUpdate) {
            slicesToUpdate.add(slicesByName.get(name));
        }
        List<EndpointSlice> slicesToDelete = new ArrayList<>();
        for (String name : sliceNamesToDelete) {
            slicesToDelete.add(slicesByName.get(name));
        }
        return new PortMappingResult(slicesToCreate, slicesToUpdate, slicesToDelete, numAdded, numRemoved);
    }

    /** A copy that can be changed without touching the informer's object. */
    static EndpointSlice deepCopy(EndpointSlice slice) {
        EndpointSlice copy = io.qkcm.runtime.DeepCopy.of(slice);
        if (copy.getEndpoints() == null) {
            copy.setEndpoints(new ArrayList<>());
        } else {
            copy.setEndpoints(new ArrayList<>(copy.getEndpoints()));
        }
        return copy;
    }

    public void deleteService(String namespace, String name) {
        metricsCache.deleteService(namespace + "/" + name);
    }

    public String controllerName() {
        return controllerName;
    }

    /** Whether one of the slices is managed by this controller and the other is not. */
    public boolean managedByChanged(EndpointSlice a, EndpointSlice b) {
        return managedByController(a) != managedByController(b);
    }

    public boolean managedByController(EndpointSlice slice) {
        Map<String, String> labels = slice.getMetadata().getLabels();
        return labels != null && controllerName.equals(labels.get(ReconcilerUtils.LABEL_MANAGED_BY));
    }

    static boolean hasStatusCause(Throwable e, String cause) {
        if (!(e instanceof KubernetesClientException kce) || kce.getStatus() == null
                || kce.getStatus().getDetails() == null || kce.getStatus().getDetails().getCauses() == null) {
            return false;
        }
        for (StatusCause c : kce.getStatus().getDetails().getCauses()) {
            if (cause.equals(c.getReason())) { // Go's StatusCause.Type is "reason" on the wire
                return true;
            }
        }
        return false;
    }

    /** The API's own message (what a Go StatusError prints), else the exception's. */
    static String apiMessage(Throwable e) {
        if (e instanceof KubernetesClientException kce && kce.getStatus() != null && kce.getStatus().getMessage() != null) {
            return kce.getStatus().getMessage();
        }
        return String.valueOf(e.getMessage());
    }
}
