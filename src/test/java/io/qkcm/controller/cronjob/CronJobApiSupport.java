package io.qkcm.controller.cronjob;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.UnaryOperator;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobSpecBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.controller.Controller;
import io.qkcm.controller.ControllerContext;
import io.qkcm.controller.GoTime;
import io.qkcm.controller.WorkQueueMetrics;
import io.qkcm.controller.events.EventBroadcaster;
import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.TestOperators;
import io.vertx.core.Vertx;

/** CronJobs, Jobs and events at a real API server, and a CronJob controller run by hand on a set clock. */
final class CronJobApiSupport {

    private CronJobApiSupport() {
    }

    static String newNamespace(KubernetesClient client, String prefix) {
        String ns = prefix + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        return ns;
    }

    /** A CronJob with a one-container Job template; {@code spec} adjusts the spec. */
    static CronJob cronJob(String name, String schedule, UnaryOperator<CronJobSpecBuilder> spec) {
        CronJobSpecBuilder b = new CronJobSpecBuilder().withSchedule(schedule)
                .withNewJobTemplate().withNewMetadata().withLabels(Map.of("tmpl", "label")).withAnnotations(Map.of("tmpl", "annotation"))
                .endMetadata().withNewSpec().withNewTemplate().withNewSpec().withRestartPolicy("Never").addNewContainer()
                .withName("c").withImage("busybox").endContainer().endSpec().endTemplate().endSpec().endJobTemplate();
        return new CronJobBuilder().withNewMetadata().withName(name).endMetadata().withSpec(spec.apply(b).build()).build();
    }

    static List<Job> jobs(KubernetesClient client, String ns) {
        return client.batch().v1().jobs().inNamespace(ns).list().getItems().stream()
                .sorted(Comparator.comparing(j -> j.getMetadata().getName())).toList();
    }

    static List<Event> events(KubernetesClient client, String ns, String reason) {
        return client.v1().events().inNamespace(ns).list().getItems().stream().filter(e -> reason.equals(e.getReason())).toList();
    }

    static CronJob get(KubernetesClient client, String ns, String name) {
        return client.batch().v1().cronjobs().inNamespace(ns).withName(name).get();
    }

    /** The first minute boundary strictly after {@code t}: the first time of "* * * * *". */
    static Instant minuteAfter(Instant t) {
        return Instant.ofEpochSecond(Math.floorDiv(t.getEpochSecond(), 60) * 60 + 60);
    }

    static String rfc3339Utc(Instant t) {
        return io.qkcm.controller.cronjob.cron.GoTimes.rfc3339(t, ZoneOffset.UTC);
    }

    static String jobName(String cronJob, Instant scheduled) {
        return cronJob + "-" + scheduled.getEpochSecond() / 60;
    }

    /** The Job finished as the job controller would report it (Complete or Failed, with the conditions the API server requires). */
    static Job finish(KubernetesClient client, String ns, String name, boolean succeeded, Instant start) {
        Job job = client.batch().v1().jobs().inNamespace(ns).withName(name).get();
        String now = GoTime.rfc3339NanoUtc(start.plusSeconds(1));
        job.getStatus().setStartTime(GoTime.rfc3339NanoUtc(start));
        if (succeeded) {
            job.getStatus().setSucceeded(1);
            job.getStatus().setCompletionTime(now);
            job.getStatus().setConditions(List.of(
                    new JobConditionBuilder().withType("SuccessCriteriaMet").withStatus("True").withLastProbeTime(now).withLastTransitionTime(now).build(),
                    new JobConditionBuilder().withType("Complete").withStatus("True").withLastProbeTime(now).withLastTransitionTime(now).build()));
        } else {
            job.getStatus().setFailed(1);
            job.getStatus().setConditions(List.of(
                    new JobConditionBuilder().withType("FailureTarget").withStatus("True").withLastProbeTime(now).withLastTransitionTime(now).build(),
                    new JobConditionBuilder().withType("Failed").withStatus("True").withLastProbeTime(now).withLastTransitionTime(now).build()));
        }
        return client.batch().v1().jobs().inNamespace(ns).resource(job).updateStatus();
    }

    /** Changes an annotation of the CronJob: an update that is not a schedule change queues it now. */
    static void poke(KubernetesClient client, String ns, String name) {
        mergePatch(client, ns, name, "{\"metadata\":{\"annotations\":{\"qkcm.test/poke\":\"" + System.nanoTime() + "\"}}}");
    }

    /** A JSON merge patch of the CronJob (no resourceVersion: the controller's status writes do not conflict with it). */
    static void mergePatch(KubernetesClient client, String ns, String name, String patch) {
        client.batch().v1().cronjobs().inNamespace(ns).withName(name)
                .patch(io.fabric8.kubernetes.client.dsl.base.PatchContext.of(io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE), patch);
    }

    /**
     * A CronJob controller built as the manager builds it (own clients, informers, event broadcaster),
     * outside the application, with a clock the test sets.
     */
    static final class Instance implements AutoCloseable {
        final KubeClients clients;
        final SharedInformers informers;
        final EventBroadcaster events;
        final ScheduledExecutorService delayer;
        final CronJobTestSupport.MutableClock clock = new CronJobTestSupport.MutableClock(Instant.now(), ZoneOffset.UTC);
        final CronJobController controller;
        final Controller running;

        Instance(Vertx vertx) throws InterruptedException {
            Map<String, String> config = new HashMap<>();
            config.put("qkcm.kubeconfig", RealApiServer.get().kubeconfig().toString());
            ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(), name -> Optional.ofNullable(config.get(name)));
            clients = new KubeClients(options, new SimpleMeterRegistry(), vertx);
            informers = new SharedInformers(clients.forComponent("shared-informers"), options.minResyncPeriod());
            events = new EventBroadcaster(clients.forComponent("event-broadcaster"));
            delayer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "test-workqueue-delayer");
                t.setDaemon(true);
                return t;
            });
            KubernetesClient client = clients.forComponent(CronJobController.NAME);
            ControllerContext context = new ControllerContext(CronJobController.NAME, client, informers,
                    events.recorder(CronJobController.NAME), options, delayer, WorkQueueMetrics.NONE, events::recorder,
                    TestOperators.create());
            controller = new CronJobController(context, clock, new Injection.RealJobControl(client), new Injection.RealCJControl(client));
            running = context.operate(controller);
            informers.start();
            informers.waitForSync(informers.all());
            running.start();
        }

        @Override
        public void close() {
            clients.close();
            informers.stop();
            try {
                running.shutdown(Duration.ZERO);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            events.shutdown(Duration.ZERO);
            delayer.shutdownNow();
        }
    }
}
