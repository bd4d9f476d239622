package io.qkcm.controller.job;

import java.time.Duration;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.runtime.josdk.QueueEventSource;
import io.qkcm.runtime.workqueue.WorkQueue;

/**
 * The Job controller's two queues and upstream's ways of filling them: the Job queue (immediately,
 * batched by {@link #SYNC_JOB_BATCH_PERIOD}, or after a delay) and the orphan-pod queue (one pod, or
 * every pod a finished Job's selector matches).
 */
final class JobQueues {

    static final String API_VERSION = "batch/v1";
    static final String KIND = "Job";
    /** Upstream's syncJobBatchPeriod: pod events within it cause one sync. */
    static final Duration SYNC_JOB_BATCH_PERIOD = Duration.ofSeconds(1);

    /** An orphan pod to clean up by name, or every pod of a namespace matching a finished Job's selector. */
    record OrphanPodKey(String namespace, String name, LabelSelector selector) {
    }

    private final Logger log;
    private final QueueEventSource<Job> queue;
    private final WorkQueue<OrphanPodKey> orphanQueue;

    JobQueues(Logger log, QueueEventSource<Job> queue, WorkQueue<OrphanPodKey> orphanQueue) {
        this.log = log;
        this.queue = queue;
        this.orphanQueue = orphanQueue;
    }

    static String key(Job job) {
        return Cache.metaNamespaceKeyFunc(job);
    }

    WorkQueue<OrphanPodKey> orphanQueue() {
        return orphanQueue;
    }

    /** Upstream's enqueueSyncJobImmediately, by key. */
    void add(String key) {
        queue.add(key);
    }

    void addAfter(String key, Duration delay) {
        queue.addAfter(key, delay);
    }

    void enqueueSyncJobBatched(Job job) {
        queue.addAfter(key(job), SYNC_JOB_BATCH_PERIOD);
    }

    void enqueueSyncJobWithDelay(Job job, Duration delay) {
        if (delay.compareTo(SYNC_JOB_BATCH_PERIOD) < 0) {
            delay = SYNC_JOB_BATCH_PERIOD;
        }
        queue.addAfter(key(job), delay);
    }

    void enqueueOrphanPod(Pod pod) {
        orphanQueue.add(new OrphanPodKey(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), null));
    }

    void enqueueLabelSelector(Job job) {
        try {
            LabelSelectors.fromLabelSelector(job.getSpec().getSelector());
        } catch (IllegalArgumentException e) {
            log.errorf("job %s has invalid label selector: %s", key(job), e.getMessage());
            return;
        }
        orphanQueue.add(new OrphanPodKey(job.getMetadata().getNamespace(), null, job.getSpec().getSelector()));
    }
}
