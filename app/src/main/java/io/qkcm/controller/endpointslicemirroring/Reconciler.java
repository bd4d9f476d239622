package io.qkcm.controller.endpointslicemirroring;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.EndpointSubsets;
import io.qkcm.controller.endpointslicemirroring.ReconcilerHelpers.DesiredCalc;
import io.qkcm.controller.endpointslicemirroring.ReconcilerHelpers.SlicesByAction;
import io.qkcm.controller.endpointslicemirroring.ReconcilerHelpers.TotalsByAction;
import io.qkcm.controller.endpointslicemirroring.metrics.MetricsCache;
import io.qkcm.controller.endpointslicemirroring.metrics.MirroringMetrics;
import io.qkcm.runtime.clients.ClientGoCreates;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.endpointslice.util.EndpointSet;
import io.qkcm.endpointslice.util.EndpointSliceTracker;
import io.qkcm.endpointslice.util.EndpointSliceUtil;

/**
 * Port of upstream reconciler.go: turns one Endpoints resource into the EndpointSlices mirroring it,
 * one slice per subset (after RepackSubsets) and address type, creating, updating in place or deleting
 * slices as needed.
 */
final class Reconciler {

    private static final Logger LOG = Logger.getLogger(Reconciler.class);

    private final KubernetesClient client;
    /** Slice creations (from generateName) as client-go sends them, never again after an I/O error. */
    private final ClientGoCreates creations;
    private final EndpointSliceTracker endpointSliceTracker;
    private final EventRecorder eventRecorder;
    private final int maxEndpointsPerSubset;
    private final MetricsCache metricsCache;
    private final MirroringMetrics metrics;

    Reconciler(KubernetesClient client, EndpointSliceTracker endpointSliceTracker, EventRecorder eventRecorder,
            int maxEndpointsPerSubset, MirroringMetrics metrics) {
        this.client = client;
        this.creations = new ClientGoCreates(client);
        this.endpointSliceTracker = endpointSliceTracker;
        this.eventRecorder = eventRecorder;
        this.maxEndpointsPerSubset = maxEndpointsPerSubset;
        this.metrics = metrics;
        this.metricsCache = new MetricsCache(maxEndpointsPerSubset, metrics);
    }

    void reconcile(Endpoints endpoints, List<EndpointSlice> existingSlices) {
        DesiredCalc d = new DesiredCalc();
        int numInvalidAddresses = 0;
        int addressesSkipped = 0;

        List<EndpointSubset> subsets = EndpointSubsets.repack(endpoints.getSubsets());
        for (EndpointSubset subset : subsets) {
            Map<String, String> multiKey = d.initPorts(subset.getPorts());
            List<EndpointAddress> ready = nullToEmpty(subset.getAddresses());
            List<EndpointAddress> notReady = nullToEmpty(subset.getNotReadyAddresses());
            int totalAddresses = ready.size() + notReady.size();
            int totalAddressesAdded = 0;
            // at most maxEndpointsPerSubset addresses per subset, so a subset maps onto one slice
            for (EndpointAddress address : ready) {
                if (totalAddressesAdded >= maxEndpointsPerSubset) {
                    break;
                }
                if (d.addAddress(address, multiKey, true)) {
                    totalAddressesAdded++;
                } else {
                    numInvalidAddresses++;
                    LOG.infof("Address in Endpoints %s/%s is not a valid IP, it will not be mirrored to an EndpointSlice: %s",
                            endpoints.getMetadata().getNamespace(), endpoints.getMetadata().getName(), address.getIp());
                }
            }
            for (EndpointAddress address : notReady) {
                if (totalAddressesAdded >= maxEndpointsPerSubset) {
                    break;
                }
                if (d.addAddress(address, multiKey, false)) {
                    totalAddressesAdded++;
                } else {
                    numInvalidAddresses++;
                    LOG.infof("Address in Endpoints %s/%s is not a valid IP, it will not be mirrored to an EndpointSlice: %s",
                            endpoints.getMetadata().getNamespace(), endpoints.getMetadata().getName(), address.getIp());
                }
            }
            addressesSkipped += totalAddresses - totalAddressesAdded;
        }

        metrics.addressesSkippedPerSync.record(addressesSkipped);

        if (numInvalidAddresses > 0) {
            eventRecorder.eventf(endpoints, EventRecorder.WARNING, Events.INVALID_IP_ADDRESS,
                    "Skipped %d invalid IP addresses when mirroring to EndpointSlices", numInvalidAddresses);
        }
        if (addressesSkipped > numInvalidAddresses) {
            LOG.infof("Addresses in Endpoints %s/%s were skipped due to exceeding MaxEndpointsPerSubset: %d",
                    endpoints.getMetadata().getNamespace(), endpoints.getMetadata().getName(), addressesSkipped);
            eventRecorder.eventf(endpoints, EventRecorder.WARNING, Events.TOO_MANY_ADDRESSES_TO_MIRROR,
                    "A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped",
                    maxEndpointsPerSubset, addressesSkipped);
        }

        Map<String, List<EndpointSlice>> existingSlicesByKey = endpointSlicesByKey(existingSlices);

        MetricsCache.EndpointPortCache epMetrics = new MetricsCache.EndpointPortCache();
        TotalsByAction totals = new TotalsByAction();
        SlicesByAction slices = new SlicesByAction();
        for (Map.Entry<String, EndpointSet> e : d.endpointsByKey.entrySet()) {
            String portKey = e.getKey();
            EndpointSet desiredEndpoints = e.getValue();
            int numEndpoints = desiredEndpoints.size();
            List<EndpointSlice> existingForKey = existingSlicesByKey.getOrDefault(portKey, List.of());
            SlicesByAction pmSlices = new SlicesByAction();
            TotalsByAction pmTotals = reconcileByPortMapping(endpoints, existingForKey, desiredEndpoints,
                    d.portsByKey.get(portKey), MirroringUtil.addressTypeOfKey(portKey), pmSlices);
            slices.append(pmSlices);
            totals.add(pmTotals);
            epMetrics.set(portKey, new MetricsCache.EfficiencyInfo(numEndpoints,
                    existingForKey.size() + pmSlices.toCreate.size() - pmSlices.toDelete.size()));
        }

        // port maps no longer desired: their slices go
        for (Map.Entry<String, List<EndpointSlice>> e : existingSlicesByKey.entrySet()) {
            if (!d.endpointsByKey.containsKey(e.getKey())) {
                slices.toDelete.addAll(e.getValue());
            }
        }

        metrics.endpointsAddedPerSync.record(totals.added);
        metrics.endpointsUpdatedPerSync.record(totals.updated);
        metrics.endpointsRemovedPerSync.record(totals.removed);
        metricsCache.updateEndpointPortCache(key(endpoints), epMetrics);

        finalize(endpoints, slices);
    }

    /** Fills {@code slices} with what one port map needs and returns the endpoint totals. */
    TotalsByAction reconcileByPortMapping(Endpoints endpoints, List<EndpointSlice> existingSlices,
            EndpointSet desiredSet, List<EndpointPort> endpointPorts, String addressType, SlicesByAction slices) {
        TotalsByAction totals = new TotalsByAction();
        if (desiredSet.size() == 0) {
            slices.toDelete.addAll(existingSlices);
            for (EndpointSlice s : existingSlices) {
                totals.removed += s.getEndpoints() == null ? 0 : s.getEndpoints().size();
            }
            return totals;
        }

        if (existingSlices.isEmpty()) {
            totals.added = desiredSet.size();
        } else {
            // all but the first existing slice go
            slices.toDelete.addAll(existingSlices.subList(1, existingSlices.size()));
            EndpointSlice first = existingSlices.get(0);
            // mirrored slices carry every Endpoints annotation but these two
            Map<String, String> compareAnnotations = MirroringUtil.cloneAndRemoveKeys(
                    endpoints.getMetadata().getAnnotations(), MirroringUtil.ENDPOINTS_LAST_CHANGE_TRIGGER_TIME,
                    MirroringUtil.LAST_APPLIED_CONFIG);
            Map<String, String> compareLabels = MirroringUtil.cloneAndRemoveKeys(first.getMetadata().getLabels(),
                    MirroringUtil.LABEL_MANAGED_BY, MirroringUtil.LABEL_SERVICE_NAME);
            totals = totalChanges(first, desiredSet);
            if (totals.added == 0 && totals.updated == 0 && totals.removed == 0
                    && MirroringUtil.semanticEqual(endpoints.getMetadata().getLabels(), compareLabels)
                    && MirroringUtil.semanticEqual(compareAnnotations, first.getMetadata().getAnnotations())
                    && !needRebuildExistingSlices(endpoints, first)) {
                if (!endpointSliceTracker.has(first)) {
                    endpointSliceTracker.update(first);
                }
                return totals;
            }
        }

        String sliceName = existingSlices.isEmpty() ? null : existingSlices.get(0).getMetadata().getName();
        EndpointSlice newSlice = MirroringUtil.newEndpointSlice(endpoints, endpointPorts, addressType, sliceName);
        while (desiredSet.size() > 0 && newSlice.getEndpoints().size() < maxEndpointsPerSubset) {
            newSlice.getEndpoints().add(desiredSet.popAny());
        }
        if (newSlice.getMetadata().getName() != null) {
            // upstream PUTs without a resourceVersion; fabric8 would first GET one, so send the cached one
            newSlice.getMetadata().setResourceVersion(existingSlices.get(0).getMetadata().getResourceVersion());
            slices.toUpdate.add(newSlice);
        } else {
            slices.toCreate.add(newSlice);
        }
        return totals;
    }

    /** Creates, updates and deletes as decided, recycling slices to delete as the ones to create. */
    void finalize(Endpoints endpoints, SlicesByAction slices) {
        ReconcilerHelpers.recycleSlices(slices);
        String ns = endpoints.getMetadata().getNamespace();
        String name = endpoints.getMetadata().getName();

        // no new slices for an Endpoints resource on its way out
        if (endpoints.getMetadata().getDeletionTimestamp() == null) {
            for (EndpointSlice slice : slices.toCreate) {
                EndpointSlice created;
                try {
                    created = creations.create(c -> c.discovery().v1().endpointSlices().inNamespace(ns).resource(slice)
                            .create());
                } catch (KubernetesClientException e) {
                    // creates keep failing in a terminating namespace: drop the item
                    if (hasStatusCause(e, "NamespaceTerminating")) {
                        return;
                    }
                    if (ApiErrors.isOutcomeUnknown(e)) {
                        // the slice may exist: no creation for these Endpoints until that is settled
                        endpointSliceTracker.markCreateUncertain(ns, name);
                    }
                    throw new MirroringException(String.format("failed to create EndpointSlice for Endpoints %s/%s: %s",
                            ns, name, e.getMessage()), e);
                }
                endpointSliceTracker.update(created);
                metrics.change("create");
            }
        }

        for (EndpointSlice slice : slices.toUpdate) {
            EndpointSlice updated;
            try {
                updated = client.discovery().v1().endpointSlices().inNamespace(ns).resource(slice).update();
            } catch (KubernetesClientException e) {
                throw new MirroringException(String.format("failed to update %s EndpointSlice for Endpoints %s/%s: %s",
                        slice.getMetadata().getName(), ns, name, e.getMessage()), e);
            }
            endpointSliceTracker.update(updated);
            metrics.change("update");
        }

        for (EndpointSlice slice : slices.toDelete) {
            try {
                client.discovery().v1().endpointSlices().inNamespace(ns).withName(slice.getMetadata().getName())
                        .delete();
            } catch (KubernetesClientException e) {
                throw new MirroringException(String.format("failed to delete %s EndpointSlice for Endpoints %s/%s: %s",
                        slice.getMetadata().getName(), ns, name, e.getMessage()), e);
            }
            endpointSliceTracker.expectDeletion(slice);
            metrics.change("delete");
        }
    }

    /** Deletes every given slice (all attempted) and forgets the Endpoints' metrics. */
    void deleteEndpoints(String namespace, String name, List<EndpointSlice> endpointSlices) {
        metricsCache.deleteEndpoints(namespace + "/" + name);
        List<Exception> errs = new ArrayList<>();
        for (EndpointSlice slice : endpointSlices) {
            try {
                client.discovery().v1().endpointSlices().inNamespace(namespace)
                        .withName(slice.getMetadata().getName()).delete();
            } catch (KubernetesClientException e) {
                errs.add(e);
            }
        }
        if (!errs.isEmpty()) {
            throw new MirroringException(String.format(
                    "error(s) deleting %d/%d EndpointSlices for %s/%s Endpoints, including: %s", errs.size(),
                    endpointSlices.size(), namespace, name, errs.get(0).getMessage()), errs.get(0));
        }
    }

    /** Existing slices grouped by address type and port map. */
    static Map<String, List<EndpointSlice>> endpointSlicesByKey(List<EndpointSlice> existingSlices) {
        Map<String, List<EndpointSlice>> byKey = new LinkedHashMap<>();
        for (EndpointSlice s : existingSlices) {
            // a copy of the list: the key sorts the ports and cached objects stay untouched
            List<EndpointPort> ports = s.getPorts() == null ? new ArrayList<>() : new ArrayList<>(s.getPorts());
            String key = MirroringUtil.addrTypePortMapKey(ports, s.getAddressType());
            byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(s);
        }
        return byKey;
    }

    /** How many endpoints an existing slice must gain, change and lose to hold exactly {@code desiredSet}. */
    static TotalsByAction totalChanges(EndpointSlice existingSlice, EndpointSet desiredSet) {
        TotalsByAction totals = new TotalsByAction();
        int existingMatches = 0;
        for (Endpoint endpoint : nullToEmpty(existingSlice.getEndpoints())) {
            Endpoint got = desiredSet.get(endpoint);
            if (got == null) {
                totals.removed++;
            } else {
                existingMatches++;
                if (!EndpointSliceUtil.endpointsEqualBeyondHash(got, endpoint)) {
                    totals.updated++;
                }
            }
        }
        totals.added = desiredSet.size() - existingMatches;
        return totals;
    }

    /** A slice owned by an earlier Endpoints of the same name (other UID) is rebuilt. */
    static boolean needRebuildExistingSlices(Endpoints endpoints, EndpointSlice existingSlice) {
        for (OwnerReference owner : nullToEmpty(existingSlice.getMetadata().getOwnerReferences())) {
            if ("Endpoints".equals(owner.getKind()) && endpoints.getMetadata().getName().equals(owner.getName())
                    && !java.util.Objects.equals(owner.getUid(), endpoints.getMetadata().getUid())) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasStatusCause(KubernetesClientException e, String cause) {
        if (e.getStatus() == null || e.getStatus().getDetails() == null
                || e.getStatus().getDetails().getCauses() == null) {
            return false;
        }
        for (StatusCause c : e.getStatus().getDetails().getCauses()) {
            if (cause.equals(c.getReason())) {
                return true;
            }
        }
        return false;
    }

    private static String key(Endpoints endpoints) {
        return endpoints.getMetadata().getNamespace() + "/" + endpoints.getMetadata().getName();
    }

    private static <T> List<T> nullToEmpty(List<T> l) {
        return l == null ? List.of() : l;
    }
}
