package io.qkcm.controller.job;

import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ControllerExpectations;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.job.metrics.JobMetrics;
import io.qkcm.runtime.events.EventRecorder;

/**
 * What the Job controller's concerns share, built once by {@link JobController} and passed down (the
 * fields of upstream's Controller struct they read): the client and caches, pod control, recorder,
 * clock, gates, metrics, the three expectations, the pod-failure backoff store, the API-call threads
 * and the queues.
 */
record JobContext(Logger log, KubernetesClient client, SharedIndexInformer<Job> jobInformer,
        SharedIndexInformer<Pod> podInformer, PodControl podControl, EventRecorder recorder, Clock clock,
        JobFeatures features, JobMetrics metrics, ControllerExpectations expectations,
        TrackingUtils.UidTrackingExpectations finalizerExpectations, BackoffUtils.BackoffStore podBackoffStore,
        Set<String> finishedJobExpectations, ExecutorService apiCalls, JobQueues queues, JobConditions conditions) {

    /** Waits for the API calls of one step (upstream's wait.Group); each task records its own failure. */
    static void waitAll(List<Future<?>> futures) throws InterruptedException {
        for (Future<?> f : futures) {
            try {
                f.get();
            } catch (ExecutionException e) {
                // recorded by the task
            }
        }
    }
}
