package io.qkcm.runtime.josdk;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceAction;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceEvent;

/**
 * Client-go's work queue never loses an add: a key added while a worker holds it is marked dirty and
 * handed out once more when the worker is done. JOSDK 5.2 (every event triggering the reconciler) keeps
 * that for a cached primary, but once it has received a <em>delete</em> event for a primary it drops the
 * primary's state, and every event received since, when the execution of that delete ends
 * ({@code EventProcessor.eventProcessingFinished} → {@code cleanupForDeletedEvent}). A key no longer
 * cached reaches JOSDK as such a delete (a tombstone, {@link QueueEventSource#add}), so an add of that key
 * during its sync would be lost: upstream syncs it once more.
 *
 * <p>This {@link Metrics} wraps the process's workqueue metrics for one Operator. JOSDK calls
 * {@link #receivedEvent} and {@link #cleanupDoneFor} under its event processor's lock, so what it sees is
 * exactly JOSDK's order: an event received after a delete event and before the state is dropped is
 * remembered, and when the state is dropped the key is added again through its queue (on another
 * thread, which enters the event processor after the drop is complete). Pinned by
 * KeyReconcilerTest#aKeyAddedWhileItsAbsentPrimaryIsSyncedIsSyncedOnceMore.
 */
final class TombstoneRedelivery implements Metrics {

    private final Metrics delegate;
    private final Map<String, Tracker> trackers = new ConcurrentHashMap<>();

    /** One controller's (one JOSDK controller's) primaries with a delete received, and those with an event since. */
    private record Tracker(QueueEventSource<?> queue, Set<ResourceID> deleteReceived, Set<ResourceID> addedSince) {
    }

    TombstoneRedelivery(Metrics delegate, Iterable<KeyReconciler<?>> reconcilers) {
        this.delegate = delegate;
        for (KeyReconciler<?> r : reconcilers) {
            trackers.put(r.queueName(), new Tracker(r.queue, ConcurrentHashMap.newKeySet(), ConcurrentHashMap.newKeySet()));
        }
    }

    private Tracker of(Map<String, Object> metadata) {
        Object name = metadata == null ? null : metadata.get(Constants.CONTROLLER_NAME);
        return name == null ? null : trackers.get(name.toString());
    }

    @Override
    public void receivedEvent(Event event, Map<String, Object> metadata) {
        delegate.receivedEvent(event, metadata);
        Tracker t = of(metadata);
        if (t == null) {
            return;
        }
        ResourceID id = event.getRelatedCustomResourceID();
        if (t.deleteReceived().contains(id)) {
            t.addedSince().add(id); // JOSDK will drop it with the deleted primary's state
        } else if (event instanceof ResourceEvent re && re.getAction() == ResourceAction.DELETED) {
            t.deleteReceived().add(id);
        }
    }

    @Override
    public void cleanupDoneFor(ResourceID id, Map<String, Object> metadata) {
        delegate.cleanupDoneFor(id, metadata);
        Tracker t = of(metadata);
        if (t == null) {
            return;
        }
        t.deleteReceived().remove(id);
        if (t.addedSince().remove(id)) {
            t.queue().redeliver(key(id));
        }
    }

    /** Upstream's key of a JOSDK resource id: {@code namespace/name}, or {@code name}. */
    static String key(ResourceID id) {
        return id.getNamespace().map(ns -> ns + "/" + id.getName()).orElse(id.getName());
    }

    // the rest is the workqueue metrics'

    @Override
    public void controllerRegistered(Controller<? extends HasMetadata> controller) {
        delegate.controllerRegistered(controller);
    }

    @Override
    public void reconcileCustomResource(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
        delegate.reconcileCustomResource(resource, retryInfo, metadata);
    }

    @Override
    public void failedReconciliation(HasMetadata resource, Exception exception, Map<String, Object> metadata) {
        delegate.failedReconciliation(resource, exception, metadata);
    }

    @Override
    public void reconciliationExecutionStarted(HasMetadata resource, Map<String, Object> metadata) {
        delegate.reconciliationExecutionStarted(resource, metadata);
    }

    @Override
    public void reconciliationExecutionFinished(HasMetadata resource, Map<String, Object> metadata) {
        delegate.reconciliationExecutionFinished(resource, metadata);
    }

    @Override
    public void finishedReconciliation(HasMetadata resource, Map<String, Object> metadata) {
        delegate.finishedReconciliation(resource, metadata);
    }

    @Override
    public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
        return delegate.timeControllerExecution(execution);
    }

    @Override
    public <T extends Map<?, ?>> T monitorSizeOf(T map, String name) {
        return delegate.monitorSizeOf(map, name);
    }
}
