package io.qkcm.runtime.josdk;

import io.qkcm.runtime.workqueue.RateLimiter;
import io.qkcm.runtime.workqueue.WorkQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.informers.SharedInformers;

/**
 * What a controller is built from: the process-wide shared informers, an API client carrying the
 * controller's own user agent (and QPS budget), its event recorder and the manager's options.
 */
public final class ControllerContext {

    private final String controllerName;
    private final KubernetesClient client;
    private final SharedInformers informers;
    private final EventRecorder events;
    private final ControllerManagerOptions options;
    private final ScheduledExecutorService delayer;
    private final Function<String, EventRecorder> recorders;
    private final Operators operators;
    /** The work queues this controller made, by name, in order (for the Dev UI). */
    private final java.util.Set<String> queues = new java.util.concurrent.CopyOnWriteArraySet<>();

    public ControllerContext(String controllerName, KubernetesClient client, SharedInformers informers,
            EventRecorder events, ControllerManagerOptions options, ScheduledExecutorService delayer,
            Operators operators) {
        this(controllerName, client, informers, events, options, delayer, component -> events, operators);
    }

    /**
     * {@code recorders} gives a recorder for another event source component, for the controllers whose
     * upstream event source is not their controller name (ReplicationController's is
     * {@code replication-controller}).
     */
    public ControllerContext(String controllerName, KubernetesClient client, SharedInformers informers,
            EventRecorder events, ControllerManagerOptions options, ScheduledExecutorService delayer,
            Function<String, EventRecorder> recorders, Operators operators) {
        this.recorders = recorders;
        this.operators = operators;
        this.controllerName = controllerName;
        this.client = client;
        this.informers = informers;
        this.events = events;
        this.options = options;
        this.delayer = delayer;
    }

    public String controllerName() {
        return controllerName;
    }

    public KubernetesClient client() {
        return client;
    }

    public SharedInformers informers() {
        return informers;
    }

    /**
     * The process's metadata-only informers, one per resource shared by every user (the garbage
     * collector's and the resource quota controller's monitors of types no typed informer serves).
     */
    public io.qkcm.runtime.informers.MetadataInformers metadataInformers() {
        return informers.metadata();
    }

    public EventRecorder events() {
        return events;
    }

    /** A recorder whose events name {@code component} as their source. */
    public EventRecorder recorderFor(String component) {
        return component.equals(controllerName) ? events : recorders.apply(component);
    }

    public ControllerManagerOptions options() {
        return options;
    }

    /** The names of the work queues this controller has made so far (its workqueue_* {@code name} labels). */
    public java.util.List<String> queues() {
        return java.util.List.copyOf(queues);
    }

    public ScheduledExecutorService delayer() {
        return delayer;
    }

    /**
     * This controller as a JOSDK Operator running {@code reconcilers} (one per upstream work queue) with
     * the controller's client, on the shared informers.
     */
    public Controller operate(KeyReconciler<?>... reconcilers) {
        return operators.operate(controllerName, client, informers, java.util.List.of(reconcilers));
    }

    /**
     * The threads this controller makes its concurrent API calls on (a slow-start batch's creations, a
     * scale-down's deletions), named after {@code name}: {@link io.qkcm.runtime.clients.ApiCallExecutor} with the
     * process's {@code qkcm.tuning.virtual-threads}.
     */
    public java.util.concurrent.ExecutorService newApiCallPool(String name, int threads) {
        return io.qkcm.runtime.clients.ApiCallExecutor.create(name, threads, options.tuning().virtualThreads());
    }

    /** The process's metrics registry (upstream's legacyregistry): controllers' own metrics go here. */
    public io.micrometer.core.instrument.MeterRegistry metrics() {
        return operators.metrics().registry();
    }

    /** Counts a retry (AddRateLimited) of the queue {@code queueName} in workqueue_retries_total. */
    public Runnable retryCounter(String queueName) {
        queues.add(queueName);
        return operators.metrics().retries(queueName);
    }

    /** A work queue with upstream's default controller rate limiter and metrics under {@code name}. */
    public <K> WorkQueue<K> newQueue(String name) {
        queues.add(name);
        return new WorkQueue<>(name, RateLimiter.controllerDefault(), delayer, operators.metrics());
    }

    /** A work queue with the given rate limiter (e.g. the namespace controller's own) and metrics. */
    public <K> WorkQueue<K> newQueue(String name, RateLimiter<K> rateLimiter) {
        queues.add(name);
        return new WorkQueue<>(name, rateLimiter, delayer, operators.metrics());
    }
}
