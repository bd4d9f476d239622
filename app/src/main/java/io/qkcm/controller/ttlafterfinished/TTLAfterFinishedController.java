package io.qkcm.controller.ttlafterfinished;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.Preconditions;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.URLUtils;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.ttlafterfinished.metrics.TTLAfterFinishedMetrics;
import io.qkcm.controller.util.job.JobUtil;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.informers.MetaNamespaceKey;

/**
 * ttl-after-finished-controller (upstream pkg/controller/ttlafterfinished): deletes a finished Job
 * (condition Complete or Failed true) {@code spec.ttlSecondsAfterFinished} after it finished (the
 * condition's lastTransitionTime), with foreground propagation and its UID as precondition, after
 * checking the TTL again on a Job read fresh from the API server. A Job whose TTL has not expired is
 * queued again for the expiry time.
 *
 * <p>Upstream's handlers queue an added or updated Job that is not being deleted, has a TTL and has
 * finished; here that is the primary filter, and JOSDK's own events of the Job do the queueing. Deletes
 * queue nothing upstream; a Job being deleted does not pass the filter either.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class TTLAfterFinishedController extends KeyReconciler<Job> {

    public static final String NAME = "ttl-after-finished-controller";
    public static final String QUEUE = "ttl_jobs_to_delete";

    private static final Logger LOG = Logger.getLogger(TTLAfterFinishedController.class);

    private final SharedIndexInformer<Job> jobs;
    private final TTLAfterFinishedMetrics metrics;
    private final Supplier<Instant> clock;

    /** {@code workers}: --concurrent-ttl-after-finished-syncs. */
    public TTLAfterFinishedController(ControllerContext context, int workers) {
        super(context, Job.class, QUEUE, workers);
        this.jobs = context.informers().informerFor(Job.class);
        this.metrics = new TTLAfterFinishedMetrics(context.metrics());
        this.clock = Instant::now;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(jobs);
    }

    /** Upstream's addJob and updateJob: queue a Job not being deleted that needs clean-up. */
    @Override
    protected GenericFilter<? super Job> primaryFilter() {
        return job -> {
            boolean queue = job.getMetadata().getDeletionTimestamp() == null && needsCleanup(job);
            if (queue) {
                log.tracef("Add job to cleanup: job %s", key(job));
            }
            return queue;
        };
    }

    @Override
    public void onStart() {
        log.info("Starting TTL after finished controller");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down TTL after finished controller");
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.errorf("error cleaning up Job %s, will retry: %s", key, shortMessage(e));
    }

    /** Upstream's processJob. */
    @Override
    protected void sync(String key) throws Exception {
        MetaNamespaceKey parts = MetaNamespaceKey.split(key);
        String namespace = parts.namespace();
        String name = parts.name();
        Job job = jobs.getStore().getByKey(key);
        log.tracef("Checking if Job is ready for cleanup: job %s", key);
        if (job == null) {
            return;
        }
        if (processTTL(job) == null) {
            return;
        }
        // the cached TTL may be stale: decide again on the Job as the API server has it now
        Job fresh = context.client().batch().v1().jobs().inNamespace(namespace).withName(name).get();
        if (fresh == null) {
            return;
        }
        Instant expiredAt = processTTL(fresh);
        if (expiredAt == null) {
            return;
        }
        log.tracef("Cleaning up Job: job %s", key);
        deleteForeground(context.client(), namespace, name, fresh.getMetadata().getUid());
        metrics.observeJobDeletionDuration(Duration.between(expiredAt, clock.get()).toNanos() / 1e9);
    }

    /**
     * Upstream's processTTL: the expiry time when the TTL has expired; otherwise null, after queueing the
     * Job for its expiry when it has one.
     */
    Instant processTTL(Job job) {
        if (job.getMetadata().getDeletionTimestamp() != null || !needsCleanup(job)) {
            return null;
        }
        Instant now = clock.get();
        TimeLeft t = timeLeft(job, now);
        if (!t.remaining().isNegative() && !t.remaining().isZero()) {
            queue.addAfter(key(job), t.remaining());
            return null;
        }
        return t.expireAt();
    }

    /** Upstream's needsCleanup: a TTL is set and the Job has finished. */
    static boolean needsCleanup(Job job) {
        return job.getSpec() != null && job.getSpec().getTtlSecondsAfterFinished() != null && JobUtil.isJobFinished(job);
    }

    record TimeLeft(Duration remaining, Instant expireAt) {
    }

    /**
     * Upstream's timeLeft: how long until the Job expires, counted from {@code since}. A finish time
     * in the future (clock skew) is logged, and the remaining time then exceeds the TTL.
     */
    static TimeLeft timeLeft(Job job, Instant since) {
        Instant[] finishAndExpire = finishAndExpireTime(job);
        Instant finishAt = finishAndExpire[0];
        Instant expireAt = finishAndExpire[1];
        if (finishAt.isAfter(since)) {
            LOG.infof("Warning: Found Job finished in the future. This is likely due to time skew in the cluster. "
                    + "Job cleanup will be deferred.: job %s", key(job));
        }
        Duration remaining = Duration.between(since, expireAt);
        LOG.tracef("Found Job finished: job %s finishTime %s remainingTTL %s startTime %s deadlineTTL %s", key(job),
                finishAt, remaining, since, expireAt);
        return new TimeLeft(remaining, expireAt);
    }

    /** Upstream's getFinishAndExpireTime. */
    static Instant[] finishAndExpireTime(Job job) {
        if (!needsCleanup(job)) {
            throw new IllegalStateException(String.format("job %s/%s should not be cleaned up",
                    job.getMetadata().getNamespace(), job.getMetadata().getName()));
        }
        Instant finishAt = jobFinishTime(job);
        Instant expireAt = finishAt.plusSeconds(job.getSpec().getTtlSecondsAfterFinished());
        return new Instant[] { finishAt, expireAt };
    }

    /** Upstream's jobFinishTime: the lastTransitionTime of the Job's Complete or Failed condition. */
    static Instant jobFinishTime(Job job) {
        JobCondition c = JobUtil.finishedJobCondition(job);
        if (c == null) {
            throw new IllegalStateException(String.format("unable to find the status of the finished Job %s/%s",
                    job.getMetadata().getNamespace(), job.getMetadata().getName()));
        }
        String t = c.getLastTransitionTime();
        Instant finishAt = null;
        if (t != null && !t.isEmpty()) {
            try {
                finishAt = Instant.parse(t);
            } catch (DateTimeParseException e) {
                finishAt = null;
            }
        }
        if (finishAt == null) {
            throw new IllegalStateException(String.format("unable to find the time when the Job %s/%s finished",
                    job.getMetadata().getNamespace(), job.getMetadata().getName()));
        }
        return finishAt;
    }

    /** DELETE with upstream's options: foreground propagation, the fresh Job's UID as precondition. */
    private static void deleteForeground(KubernetesClient client, String namespace, String name, String uid)
            throws InterruptedException {
        DeleteOptions opts = new DeleteOptions();
        opts.setApiVersion("v1");
        opts.setKind("DeleteOptions");
        opts.setPropagationPolicy("Foreground");
        Preconditions p = new Preconditions();
        p.setUid(uid);
        opts.setPreconditions(p);
        String url = URLUtils.join(client.getMasterUrl().toString(), "apis", "batch", "v1", "namespaces", namespace,
                "jobs", name);
        HttpRequest request = client.getHttpClient().newHttpRequestBuilder().uri(url)
                .delete("application/json", io.qkcm.runtime.Json.api().asJson(opts)).build();
        HttpResponse<String> response;
        try {
            response = client.getHttpClient().sendAsync(request, String.class).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new KubernetesClientException("deleting job " + namespace + "/" + name + ": " + e.getCause(),
                    e.getCause());
        } catch (TimeoutException e) {
            throw new KubernetesClientException("deleting job " + namespace + "/" + name + ": timed out");
        }
        int code = response.code();
        if (code < 200 || code >= 300) {
            String body = response.body();
            io.fabric8.kubernetes.api.model.Status status = null;
            try {
                status = io.qkcm.runtime.Json.api().unmarshal(body, io.fabric8.kubernetes.api.model.Status.class);
            } catch (RuntimeException ignored) {
                // not a Status: keep the body as message
            }
            String message = status != null && status.getMessage() != null ? status.getMessage() : body;
            throw new KubernetesClientException(message, code, status);
        }
    }
}
