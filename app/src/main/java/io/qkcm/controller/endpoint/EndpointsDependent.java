package io.qkcm.controller.endpoint;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Creator;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.Updater;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Deleter;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.GoTime;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.josdk.SharedCacheDependent;

/**
 * A Service's Endpoints as a JOSDK dependent resource, with upstream's write path whole:
 * {@link #desired} is the cached object (or a new one named as the Service, with its labels) with the
 * subsets the controller computed, the trigger-time and over-capacity annotations and upstream's labels;
 * {@link #match} is upstream's "nothing to write" test (same subsets ignoring resource versions, labels
 * correct, over-capacity annotation correct) after its stale-cache check; a create is a POST, an update a
 * PUT of that object, each failure recorded as upstream's event; {@link #delete} removes the Endpoints of
 * a deleted Service by name. The subsets come from the controller's sync through the reconcile's
 * dependent-resource context ({@link #SUBSETS}).
 */
final class EndpointsDependent extends SharedCacheDependent<Endpoints, Service>
        implements Creator<Endpoints, Service>, Updater<Endpoints, Service>, Deleter<Service> {

    private static final Logger LOG = Logger.getLogger(EndpointsDependent.class);

    /** What the controller computed for this reconcile: the repacked subsets and the trigger time. */
    record Computed(List<EndpointSubset> subsets, Instant triggerTime) {
    }

    static final String SUBSETS = "endpoints-controller/computed";

    private final Store<Endpoints> cache;
    private final StaleEndpointsTracker staleEndpointsTracker;
    private final EventRecorder recorder;

    EndpointsDependent(Store<Endpoints> cache, StaleEndpointsTracker staleEndpointsTracker, EventRecorder recorder) {
        super(Endpoints.class, "endpoints", cache);
        this.cache = cache;
        this.staleEndpointsTracker = staleEndpointsTracker;
        this.recorder = recorder;
    }

    @Override
    protected String key(Service svc) {
        return svc.getMetadata().getNamespace() + "/" + svc.getMetadata().getName();
    }

    private static Computed computed(Context<Service> ctx) {
        return ctx.managedWorkflowAndDependentResourceContext().getMandatory(SUBSETS, Computed.class);
    }

    @Override
    protected Endpoints desired(Service service, Context<Service> ctx) {
        Computed computed = computed(ctx);
        Endpoints current = cache.getByKey(key(service));
        if (current == null) {
            current = new Endpoints();
            ObjectMeta meta = new ObjectMeta();
            meta.setName(service.getMetadata().getName());
            meta.setLabels(service.getMetadata().getLabels() == null ? null
                    : new LinkedHashMap<>(service.getMetadata().getLabels()));
            current.setMetadata(meta);
        }
        List<EndpointSubset> subsets = computed.subsets();
        Endpoints desired = io.qkcm.runtime.DeepCopy.of(current);
        desired.setSubsets(subsets);
        Map<String, String> annotations = current.getMetadata().getAnnotations() == null ? new LinkedHashMap<>()
                : new LinkedHashMap<>(current.getMetadata().getAnnotations());
        if (computed.triggerTime() != null) {
            annotations.put(EndpointsController.LAST_CHANGE_TRIGGER_TIME, GoTime.rfc3339NanoUtc(computed.triggerTime()));
        } else {
            annotations.remove(EndpointsController.LAST_CHANGE_TRIGGER_TIME);
        }
        if (EndpointsCapacity.truncate(subsets)) {
            annotations.put(EndpointsCapacity.OVER_CAPACITY_ANNOTATION, EndpointsCapacity.TRUNCATED);
        } else {
            annotations.remove(EndpointsCapacity.OVER_CAPACITY_ANNOTATION);
        }
        desired.getMetadata().setAnnotations(annotations);

        Map<String, String> labels = service.getMetadata().getLabels() == null ? new LinkedHashMap<>()
                : new LinkedHashMap<>(service.getMetadata().getLabels());
        if (!EndpointsController.isServiceIPSet(service)) {
            labels.put(EndpointsComparison.IS_HEADLESS_SERVICE, "");
        } else {
            labels.remove(EndpointsComparison.IS_HEADLESS_SERVICE);
        }
        labels.put(EndpointsComparison.LABEL_MANAGED_BY, EndpointsController.CONTROLLER_NAME);
        desired.getMetadata().setLabels(labels);
        return desired;
    }

    @Override
    public Matcher.Result<Endpoints> match(Endpoints current, Service service, Context<Service> ctx) {
        if (staleEndpointsTracker.isStale(current)) {
            throw new IllegalStateException("endpoints informer cache is out of date, resource version "
                    + current.getMetadata().getResourceVersion() + " already processed for endpoints " + key(service));
        }
        List<EndpointSubset> subsets = computed(ctx).subsets();
        boolean unchanged = EndpointsComparison.subsetsEqualIgnoreResourceVersion(current.getSubsets(), subsets)
                && EndpointsComparison.labelsCorrect(current.getMetadata().getLabels(), service.getMetadata().getLabels())
                && EndpointsCapacity.annotationSetCorrectly(current.getMetadata().getAnnotations(), current.getSubsets());
        if (unchanged) {
            LOG.tracef("endpoints are equal for %s, skipping update", key(service));
        }
        return Matcher.Result.nonComputed(unchanged);
    }

    @Override
    public Endpoints create(Endpoints desired, Service service, Context<Service> ctx) {
        String ns = service.getMetadata().getNamespace();
        try {
            // a copy: the event below must name the object exactly as it was sent
            return ctx.getClient().endpoints().inNamespace(ns).resource(new EndpointsBuilder(desired).build()).create();
        } catch (KubernetesClientException e) {
            if (ApiErrors.isForbidden(e)) {
                LOG.tracef("Forbidden from creating endpoints: %s", ApiErrors.message(e));
                // a terminating namespace refuses creations for good: drop the key
                if (ApiErrors.hasStatusCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                    return desired;
                }
            }
            recorder.eventf(desired, EventRecorder.WARNING, "FailedToCreateEndpoint",
                    "Failed to create endpoint for service %s/%s: %s", ns, service.getMetadata().getName(),
                    ApiErrors.message(e));
            throw e;
        }
    }

    @Override
    public Endpoints update(Endpoints current, Endpoints desired, Service service, Context<Service> ctx) {
        String ns = service.getMetadata().getNamespace();
        Endpoints updated;
        try {
            updated = ctx.getClient().endpoints().inNamespace(ns).resource(desired).update();
        } catch (KubernetesClientException e) {
            recorder.eventf(desired, EventRecorder.WARNING, "FailedToUpdateEndpoint", "Failed to update endpoint %s/%s: %s",
                    ns, service.getMetadata().getName(), ApiErrors.message(e));
            throw e;
        }
        // The version just replaced must not be written from again: if the cache still shows it, it is
        // behind. A write that changed nothing (same version back) leaves nothing to guard against.
        if (!Objects.equals(updated.getMetadata().getResourceVersion(), current.getMetadata().getResourceVersion())) {
            staleEndpointsTracker.stale(current);
        }
        return updated;
    }

    /** The Endpoints of a deleted Service go too, by name, cached or not (upstream's delete, NotFound ignored). */
    @Override
    public void delete(Service service, Context<Service> ctx) {
        ctx.getClient().endpoints().inNamespace(service.getMetadata().getNamespace())
                .withName(service.getMetadata().getName()).delete();
    }
}
