package io.qkcm.controller.job;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ControllerExpectations;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.ControllerRefs;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.job.metrics.JobMetrics;
import io.qkcm.controller.util.job.JobUtil;

import static io.qkcm.controller.job.JobQueues.key;

/**
 * Upstream's event handlers of the Job controller (job_controller.go's addPod, updatePod, deletePod,
 * addJob, updateJob, deleteJob): they observe expectations and queue the Job, batched as upstream, or a
 * pod whose tracking finalizer no Job will remove on the orphan-pod queue.
 */
final class JobEventHandlers {

    private final Logger log;
    private final SharedIndexInformer<Job> jobInformer;
    private final Clock clock;
    private final JobFeatures features;
    private final JobMetrics metrics;
    private final ControllerExpectations expectations;
    private final TrackingUtils.UidTrackingExpectations finalizerExpectations;
    private final BackoffUtils.BackoffStore podBackoffStore;
    private final Set<String> finishedJobExpectations;
    private final JobQueues queue;

    JobEventHandlers(JobContext c) {
        this.log = c.log();
        this.jobInformer = c.jobInformer();
        this.clock = c.clock();
        this.features = c.features();
        this.metrics = c.metrics();
        this.expectations = c.expectations();
        this.finalizerExpectations = c.finalizerExpectations();
        this.podBackoffStore = c.podBackoffStore();
        this.finishedJobExpectations = c.finishedJobExpectations();
        this.queue = c.queues();
    }

    private List<Job> getPodJobs(Pod pod) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        List<Job> result = ControllerRefs.selecting(jobInformer, pod.getMetadata().getNamespace(), labels,
                job -> job.getSpec().getSelector(), false);
        if (result.size() > 1) {
            log.errorf("user error! more than one job is selecting pods with labels: %s", labels);
        }
        return result;
    }

    private Job resolveControllerRef(String namespace, OwnerReference ref) {
        return ControllerRefs.resolveControllerRef(JobQueues.KIND, jobInformer, namespace, ref);
    }

    void addPod(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            // seen for the first time already being deleted (e.g. after a restart): not a creation
            deletePod(pod, false);
            return;
        }
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        if (ref != null) {
            Job job = resolveControllerRef(pod.getMetadata().getNamespace(), ref);
            if (job == null) {
                return;
            }
            expectations.creationObserved(key(job));
            queue.enqueueSyncJobBatched(job);
            return;
        }
        if (TrackingUtils.hasJobTrackingFinalizer(pod)) {
            queue.enqueueOrphanPod(pod);
        }
        for (Job job : getPodJobs(pod)) {
            queue.enqueueSyncJobBatched(job);
        }
    }

    void updatePod(Pod oldPod, Pod curPod) {
        if (Objects.equals(curPod.getMetadata().getResourceVersion(), oldPod.getMetadata().getResourceVersion())) {
            return; // periodic resync
        }
        if (curPod.getMetadata().getDeletionTimestamp() != null) {
            // a graceful deletion: the Job may replace the pod now, without waiting for its removal
            deletePod(curPod, false);
            return;
        }
        // the latest state counts: during an ownership transfer the finalizer can come and go
        boolean finalizerRemoved = !TrackingUtils.hasJobTrackingFinalizer(curPod);
        OwnerReference curRef = ControllerRefManager.controllerOf(curPod);
        OwnerReference oldRef = ControllerRefManager.controllerOf(oldPod);
        boolean refChanged = !Objects.equals(curRef, oldRef);
        if (refChanged && oldRef != null) {
            Job job = resolveControllerRef(oldPod.getMetadata().getNamespace(), oldRef);
            if (job != null) {
                if (finalizerRemoved) {
                    finalizerExpectations.finalizerRemovalObserved(key(job), curPod.getMetadata().getUid());
                }
                queue.enqueueSyncJobBatched(job);
            }
        }
        if (curRef != null) {
            Job job = resolveControllerRef(curPod.getMetadata().getNamespace(), curRef);
            if (job == null) {
                return;
            }
            if (finalizerRemoved) {
                finalizerExpectations.finalizerRemovalObserved(key(job), curPod.getMetadata().getUid());
            }
            queue.enqueueSyncJobBatched(job);
            return;
        }
        if (TrackingUtils.hasJobTrackingFinalizer(curPod)) {
            queue.enqueueOrphanPod(curPod);
        }
        boolean labelChanged = !Objects.equals(curPod.getMetadata().getLabels(), oldPod.getMetadata().getLabels());
        if (labelChanged || refChanged) {
            for (Job job : getPodJobs(curPod)) {
                queue.enqueueSyncJobBatched(job);
            }
        }
    }

    void deletePod(Pod pod, boolean fin) {
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        boolean hasFinalizer = TrackingUtils.hasJobTrackingFinalizer(pod);
        if (ref == null) {
            // maybe a Job's pod whose owner reference the garbage collector removed
            if (hasFinalizer) {
                queue.enqueueOrphanPod(pod);
            }
            return;
        }
        Job job = resolveControllerRef(pod.getMetadata().getNamespace(), ref);
        if (job == null || JobUtil.isJobFinished(job)) {
            // no sync of the Job will remove this finalizer
            if (hasFinalizer) {
                queue.enqueueOrphanPod(pod);
            }
            return;
        }
        String jobKey = key(job);
        expectations.deletionObserved(jobKey);
        // the final delete removes the finalizer with the pod; an update only if it is gone
        if (fin || !hasFinalizer) {
            finalizerExpectations.finalizerRemovalObserved(jobKey, pod.getMetadata().getUid());
        }
        queue.enqueueSyncJobBatched(job);
    }

    void addJob(Job job) {
        queue.add(key(job));
        String controllerName = features.managedByExternalController(job);
        if (controllerName != null) {
            metrics.jobByExternalController(controllerName);
        }
    }

    /** Upstream's recordFinishedPodWithTrackingFinalizer (terminated_pods_tracking_finalizer_total). */
    void recordFinishedPodWithTrackingFinalizer(Pod oldPod, Pod newPod) {
        boolean was = TrackingUtils.isFinishedPodWithTrackingFinalizer(oldPod);
        boolean is = TrackingUtils.isFinishedPodWithTrackingFinalizer(newPod);
        if (was != is) {
            metrics.terminatedPodsTrackingFinalizer(is ? JobMetrics.ADD : JobMetrics.DELETE);
        }
    }

    void updateJob(Job oldJob, Job curJob) {
        String key = key(curJob);
        // a finished Job should have no tracked pods left; sweep them anyway
        if (JobUtil.isJobFinished(curJob)) {
            queue.enqueueLabelSelector(curJob);
            return;
        }
        if (Objects.equals(curJob.getMetadata().getGeneration(), oldJob.getMetadata().getGeneration())) {
            // status-only changes, usually caused by pod events: batched
            queue.enqueueSyncJobBatched(curJob);
        } else {
            queue.add(key);
        }
        Instant startTime = curJob.getStatus() == null ? null : PodUtil.parseTime(curJob.getStatus().getStartTime());
        if (startTime != null) {
            Long curADS = curJob.getSpec().getActiveDeadlineSeconds();
            if (curADS == null) {
                return;
            }
            Long oldADS = oldJob.getSpec().getActiveDeadlineSeconds();
            if (oldADS == null || !oldADS.equals(curADS)) {
                Duration passed = Duration.between(startTime, clock.instant());
                Duration total = Duration.ofSeconds(curADS);
                queue.addAfter(key, total.minus(passed));
                log.debugf("job's ActiveDeadlineSeconds updated, will rsync: key=%s interval=%s", key, total.minus(passed));
            }
        }
    }

    void deleteJob(Job job) {
        String key = key(job);
        queue.add(key);
        finishedJobExpectations.remove(job.getMetadata().getUid());
        queue.enqueueLabelSelector(job);
        podBackoffStore.removeBackoffRecord(key);
    }
}
