package io.qkcm.controller.job;

import java.util.ArrayList;
import java.util.List;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.ControllerRefs;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.PodIndexes;
import io.qkcm.controller.util.job.JobUtil;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.workqueue.WorkQueue;

/**
 * Upstream's orphan-pod queue (job_controller.go's orphanWorker, syncOrphanPod, handleSingleOrphanPod):
 * removes the tracking finalizer from pods whose Job is gone, finished or not theirs, and, for a
 * finished or deleted Job, from every pod its selector matches.
 */
final class OrphanPodFinalizers {

    private final Logger log;
    private final SharedIndexInformer<Job> jobInformer;
    private final SharedIndexInformer<Pod> podInformer;
    private final PodControl podControl;
    private final JobFeatures features;
    private final WorkQueue<JobQueues.OrphanPodKey> orphanQueue;
    private final CacheSync cacheSync;
    private final List<Thread> workers = new ArrayList<>();

    /** Waits for the caches the workers read (upstream's WaitForNamedCacheSync). */
    interface CacheSync {
        void await() throws InterruptedException;
    }

    OrphanPodFinalizers(JobContext c, CacheSync cacheSync) {
        this.log = c.log();
        this.jobInformer = c.jobInformer();
        this.podInformer = c.podInformer();
        this.podControl = c.podControl();
        this.features = c.features();
        this.orphanQueue = c.queues().orphanQueue();
        this.cacheSync = cacheSync;
    }

    /** Upstream's Run also starts as many orphan-pod workers as Job workers. */
    synchronized void start(int count, String threadNamePrefix) {
        if (!workers.isEmpty()) {
            return;
        }
        for (int i = 0; i < count; i++) {
            Thread t = new Thread(this::runOrphanWorker, threadNamePrefix + i);
            t.setDaemon(true);
            workers.add(t);
            t.start();
        }
    }

    void shutDown() {
        orphanQueue.shutDown();
    }

    private void runOrphanWorker() {
        try {
            cacheSync.await();
            while (true) {
                JobQueues.OrphanPodKey key = orphanQueue.get();
                if (key == null) {
                    return;
                }
                try {
                    syncOrphanPod(key);
                    orphanQueue.forget(key);
                } catch (RuntimeException e) {
                    log.errorf("Error syncing orphan pod %s: %s", key, KeyReconciler.shortMessage(e));
                    orphanQueue.addRateLimited(key);
                } finally {
                    orphanQueue.done(key);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void syncOrphanPod(JobQueues.OrphanPodKey key) {
        if (key.name() != null) {
            Pod pod = podInformer.getStore().getByKey(key.namespace() + "/" + key.name());
            if (pod == null) {
                log.tracef("Orphan pod %s/%s has been deleted", key.namespace(), key.name());
                return;
            }
            handleSingleOrphanPod(pod);
            return;
        }
        LabelSelectors.Selector selector = LabelSelectors.fromLabelSelector(key.selector());
        for (Pod pod : PodIndexes.podsInNamespace(podInformer, key.namespace())) {
            if (!selector.matches(pod.getMetadata().getLabels())) {
                continue;
            }
            try {
                handleSingleOrphanPod(pod);
            } catch (RuntimeException e) {
                log.errorf("syncing orphan pod %s/%s failed: %s", pod.getMetadata().getNamespace(),
                        pod.getMetadata().getName(), KeyReconciler.shortMessage(e));
            }
        }
    }

    private void handleSingleOrphanPod(Pod pod) {
        String ns = pod.getMetadata().getNamespace();
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        if (ref != null) {
            if (!JobQueues.KIND.equals(ref.getKind()) || !JobQueues.API_VERSION.equals(ref.getApiVersion())) {
                return; // controlled by something else than a batch/v1 Job
            }
            Job job = ControllerRefs.resolveControllerRef(JobQueues.KIND, jobInformer, ns, ref);
            if (job != null && features.managedByExternalController(job) != null) {
                log.debugf("Skip cleanup of the job finalizer for a pod owned by a job that is managed by an external controller: %s/%s",
                        ns, pod.getMetadata().getName());
                return;
            }
            if (job != null && !JobUtil.isJobFinished(job)) {
                return; // adopted
            }
        }
        String patch = TrackingUtils.removeTrackingFinalizerPatch(pod);
        if (patch != null) {
            try {
                podControl.patchPod(ns, pod.getMetadata().getName(), patch);
            } catch (KubernetesClientException e) {
                if (!ApiErrors.isNotFound(e)) {
                    throw e;
                }
            }
        }
    }
}
