package io.qkcm.controller.volume.persistentvolume;

import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ApiErrors;

/**
 * Upstream's recyclerclient.RecycleVolumeByWatchingPodUntilCompletion: creates the recycler pod, waits
 * until it succeeds, fails or is deleted, relays the events about the pod to the volume, then deletes
 * the pod. Upstream opens its own watches on the pod and on its events; here the pod's changes come from
 * the process's pod informer, and the events come from a watch of this pod's events only (field selector
 * {@code involvedObject.name}), open while the pod runs: upstream's RBAC role grants the binder
 * {@code watch} on events, not {@code list}, and no informer of all events exists.
 */
final class RecyclerClient {

    /** RecycleEventRecorder. */
    interface EventSink {
        void event(String type, String message);
    }

    private record PodChange(String type, Pod pod) {
    }

    private record EventAdded(Event event) {
    }

    private record WatchClosed() {
    }

    private static final Logger LOG = Logger.getLogger(RecyclerClient.class);
    private final KubernetesClient client;
    private final Map<String, BlockingQueue<Object>> waiters = new ConcurrentHashMap<>();

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
        BlockingQueue<Object> q = waiters.get(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName());
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
        BlockingQueue<Object> changes = new LinkedBlockingQueue<>();
        // listen before creating, as upstream starts its watches before the create
        waiters.put(key, changes);
        Watch events;
        try {
            events = client.v1().events().inNamespace(ns).withField("involvedObject.name", name).watch(new Watcher<>() {
                @Override
                public void eventReceived(Action action, Event event) {
                    if (action == Action.ADDED) {
                        changes.add(new EventAdded(event));
                    }
                }

                @Override
                public void onClose(WatcherException cause) {
                    changes.add(new WatchClosed());
                }
            });
        } catch (RuntimeException e) {
            waiters.remove(key, changes);
            LOG.debugf("cannot start watcher for pod %s: %s", key, ApiErrors.message(e));
            throw e;
        }
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
            events.close();
            waiters.remove(key, changes);
        }
    }

    private void deletePod(String ns, String name) {
        client.pods().inNamespace(ns).withName(name).delete();
    }

    /** waitForPod: the pod's changes (of this pod's UID only) and its events, until it ends. */
    private void waitForPod(Pod created, BlockingQueue<Object> changes, EventSink recorder) throws InterruptedException {
        String uid = created.getMetadata().getUid();
        while (true) {
            Object next = changes.take();
            if (next instanceof WatchClosed) {
                throw new IllegalStateException("recycler pod \"" + created.getMetadata().getName()
                        + "\" watch channel had been closed");
            }
            if (next instanceof EventAdded added) {
                recorder.event(added.event().getType(), added.event().getMessage());
                continue;
            }
            PodChange change = (PodChange) next;
            if (!uid.equals(change.pod().getMetadata().getUid())) {
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
}
