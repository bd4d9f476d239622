package io.qkcm.controller.volume.persistentvolume;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.ResourceNotFoundException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ApiErrors;

/**
 * Upstream's recyclerclient.RecycleVolumeByWatchingPodUntilCompletion: creates the recycler pod, waits
 * until it succeeds, fails or is deleted, relays the events about the pod to the volume, then deletes
 * the pod. Upstream opens its own watches on the pod and its events; here the pod's changes come from
 * the process's pod informer, and the events about it are listed (field selector
 * {@code involvedObject.name}) while waiting, each relayed once, as upstream relays each event its watch
 * adds.
 */
final class RecyclerClient {

    /** RecycleEventRecorder. */
    interface EventSink {
        void event(String type, String message);
    }

    private record PodChange(String type, Pod pod) {
    }

    private static final Logger LOG = Logger.getLogger(RecyclerClient.class);
    static final long EVENT_POLL_MILLIS = 1000;

    private final KubernetesClient client;
    private final Map<String, BlockingQueue<PodChange>> waiters = new ConcurrentHashMap<>();

    RecyclerClient(KubernetesClient client, SharedIndexInformer<Pod> pods) {
        this.client = client;
        pods.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                deliver("ADDED", pod);
            }

            @Override
            public void onUpdate(Pod oldPod, Pod pod) {
                deliver("MODIFIED", pod);
            }

            @Override
            public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
                deliver("DELETED", pod);
            }
        });
    }

    private void deliver(String type, Pod pod) {
        if (waiters.isEmpty()) {
            return;
        }
        BlockingQueue<PodChange> q = waiters.get(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName());
        if (q != null) {
            q.add(new PodChange(type, pod));
        }
    }

    /** Recycles with {@code pod} (already named recycler-for-pv); throws upstream's errors. */
    void recycle(Pod pod, EventSink recorder) throws InterruptedException {
        String ns = pod.getMetadata().getNamespace() == null || pod.getMetadata().getNamespace().isEmpty() ? "default"
                : pod.getMetadata().getNamespace();
        pod.getMetadata().setNamespace(ns);
        String name = pod.getMetadata().getName();
        String key = ns + "/" + name;
        BlockingQueue<PodChange> changes = new LinkedBlockingQueue<>();
        // listen before creating, as upstream starts its watch before the create
        waiters.put(key, changes);
        try {
            Pod created;
            try {
                created = client.pods().inNamespace(ns).resource(pod).create();
            } catch (RuntimeException e) {
                if (ApiErrors.isAlreadyExists(e)) {
                    try {
                        deletePod(ns, name);
                    } catch (RuntimeException deleteErr) {
                        throw new IllegalStateException("failed to delete old recycler pod " + key + ": "
                                + ApiErrors.message(deleteErr), deleteErr);
                    }
                    throw new IllegalStateException("old recycler pod found, will retry later");
                }
                throw new IllegalStateException("unexpected error creating recycler pod:  " + ApiErrors.message(e), e);
            }
            RuntimeException waitErr = null;
            try {
                waitForPod(created, changes, recorder);
            } catch (RuntimeException e) {
                waitErr = e;
            } finally {
                LOG.debugf("deleting recycler pod %s", key);
                RuntimeException deleteErr = null;
                try {
                    deletePod(ns, name);
                } catch (RuntimeException e) {
                    LOG.errorf("failed to delete recycler pod %s: %s", key, ApiErrors.message(e));
                    deleteErr = e;
                }
                if (waitErr != null) {
                    throw new IllegalStateException("failed to recycle volume: " + waitErr.getMessage(), waitErr);
                }
                if (deleteErr != null && !Thread.currentThread().isInterrupted()) {
                    throw new IllegalStateException("failed to delete recycler pod: " + ApiErrors.message(deleteErr), deleteErr);
                }
            }
        } finally {
            waiters.remove(key, changes);
        }
    }

    private void deletePod(String ns, String name) {
        client.pods().inNamespace(ns).withName(name).delete();
    }

    /** waitForPod: the pod's changes (of this pod's UID only) and its events, until it ends. */
    private void waitForPod(Pod created, BlockingQueue<PodChange> changes, EventSink recorder) throws InterruptedException {
        String uid = created.getMetadata().getUid();
        Set<String> relayed = new HashSet<>();
        while (true) {
            PodChange change = changes.poll(EVENT_POLL_MILLIS, TimeUnit.MILLISECONDS);
            relayEvents(created, relayed, recorder);
            if (change == null || !uid.equals(change.pod().getMetadata().getUid())) {
                continue;
            }
            Pod pod = change.pod();
            LOG.debugf("recycler pod update received: %s %s/%s %s", change.type(), pod.getMetadata().getNamespace(),
                    pod.getMetadata().getName(), pod.getStatus() == null ? "" : pod.getStatus().getPhase());
            if ("DELETED".equals(change.type())) {
                throw new IllegalStateException("recycler pod was deleted");
            }
            String phase = pod.getStatus() == null ? "" : StorageHelpers.nonNull(pod.getStatus().getPhase());
            if ("Succeeded".equals(phase)) {
                return;
            }
            if ("Failed".equals(phase)) {
                String message = pod.getStatus().getMessage();
                throw new IllegalStateException(message != null && !message.isEmpty() ? message
                        : "pod failed, pod.Status.Message unknown");
            }
        }
    }

    private void relayEvents(Pod pod, Set<String> relayed, EventSink recorder) {
        List<Event> events;
        try {
            events = client.v1().events().inNamespace(pod.getMetadata().getNamespace())
                    .withField("involvedObject.name", pod.getMetadata().getName()).list().getItems();
        } catch (ResourceNotFoundException e) {
            return;
        } catch (RuntimeException e) {
            LOG.debugf("cannot list events of recycler pod %s: %s", pod.getMetadata().getName(), ApiErrors.message(e));
            return;
        }
        for (Event e : events) {
            if (relayed.add(e.getMetadata().getUid())) {
                recorder.event(e.getType(), e.getMessage());
            }
        }
    }
}
