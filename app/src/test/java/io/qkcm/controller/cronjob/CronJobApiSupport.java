package io.qkcm.controller.cronjob;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobSpecBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.GoTime;
import io.qkcm.testing.ControllerHarness;
import io.vertx.core.Vertx;

/** CronJobs, Jobs and events at a real API server, and a CronJob controller run by hand on a set clock. */
final class CronJobApiSupport {

    private CronJobApiSupport() {
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
     * outside the application, on {@code clock} (which the test sets), started.
     */
    static ControllerHarness<CronJobController> startController(Vertx vertx, CronJobTestSupport.MutableClock clock)
            throws InterruptedException {
        return ControllerHarness.create(vertx, CronJobController.NAME, context -> new CronJobController(context,
                CronJobControllerDescriptor.workers(context), clock,
                new Injection.RealJobControl(context.client()), new Injection.RealCJControl(context.client()))).start();
    }
}
