package io.qkcm.controller.cronjob;

import static io.qkcm.controller.cronjob.CronJobApiSupport.cronJob;
import static io.qkcm.controller.cronjob.CronJobApiSupport.events;
import static io.qkcm.controller.cronjob.CronJobApiSupport.jobs;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.cronjob.cron.GoTimes;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * cronjob-controller as the application runs it (--controllers=cronjob-controller, the wall clock)
 * against a real API server. The schedule logic itself is tested on a set clock in
 * {@link CronJobControllerClockTest}; here an every-minute CronJob fires within a minute.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(CronJobControllerTest.Profile.class)
class CronJobControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "cronjob-controller", "qkcm.concurrent-cron-job-syncs", "3");
        }
    }

    static KubernetesClient client;

    @jakarta.inject.Inject
    io.qkcm.manager.ControllerManager manager;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @Test
    void runsAsAnOperatorWithTheFlagsWorkersOnUpstreamsQueue() {
        assertThat(manager.controllers()).filteredOn(c -> c.name().equals("cronjob-controller")).singleElement()
                .isInstanceOfSatisfying(io.qkcm.runtime.josdk.OperatorController.class, oc -> {
                    assertThat(oc.workerCount()).isEqualTo(3);
                    assertThat(oc.reconcilers()).extracting(io.qkcm.runtime.josdk.KeyReconciler::queueName).containsExactly("cronjob");
                });
    }

    @Test
    void everyMinuteCronJobCreatesUpstreamsJobAtTheMinute() {
        String ns = newNamespace(client, "cj-app");
        CronJob cj = client.batch().v1().cronjobs().inNamespace(ns)
                .resource(cronJob("tick", "* * * * *", s -> s.withTimeZone("Europe/Berlin"))).create();
        Instant first = CronJobApiSupport.minuteAfter(Instant.parse(cj.getMetadata().getCreationTimestamp()));

        List<Job> created = await().atMost(Duration.ofSeconds(100)).until(() -> jobs(client, ns), l -> !l.isEmpty());
        Job job = created.get(0);
        Instant scheduled = Instant.ofEpochSecond(Long.parseLong(job.getMetadata().getName().substring("tick-".length())) * 60);
        assertThat(scheduled).isAfterOrEqualTo(first);
        assertThat(job.getMetadata().getAnnotations()).containsEntry("batch.kubernetes.io/cronjob-scheduled-timestamp",
                GoTimes.rfc3339(scheduled, java.time.ZoneId.of("Europe/Berlin")));
        CronJob status = await().atMost(Duration.ofSeconds(30)).until(
                () -> client.batch().v1().cronjobs().inNamespace(ns).withName("tick").get(),
                c -> c.getStatus() != null && c.getStatus().getLastScheduleTime() != null);
        assertThat(status.getStatus().getActive()).extracting(r -> r.getName()).contains(job.getMetadata().getName());
        assertThat(events(client, ns, "SuccessfulCreate")).extracting(Event::getMessage)
                .contains("Created job " + job.getMetadata().getName());
    }

    /**
     * A time zone kube-apiserver's zone database knows and the JDK's does not (the two databases can
     * differ): upstream's UnknownTimeZone warning, no Job, no retry loop.
     */
    @Test
    void aTimeZoneUnknownHereGetsUnknownTimeZone() {
        String ns = newNamespace(client, "cj-tz");
        String zone = null;
        for (String candidate : List.of("posixrules", "localtime", "America/Coyhaique", "posix/Europe/Berlin")) {
            try {
                GoTimes.loadLocation(candidate);
                continue; // known here too
            } catch (GoTimes.GoError expected) {
                // unknown here: a candidate if the API server accepts it
            }
            try {
                client.batch().v1().cronjobs().inNamespace(ns).resource(cronJob("tz", "* * * * *", s -> s.withTimeZone(candidate)))
                        .create();
                zone = candidate;
                break;
            } catch (KubernetesClientException e) {
                // the API server does not know it either
            }
        }
        Assumptions.assumeTrue(zone != null, "the API server's zone database has no zone the JDK lacks");
        String z = zone;
        List<Event> events = await().atMost(Duration.ofSeconds(30)).until(() -> events(client, ns, "UnknownTimeZone"), l -> !l.isEmpty());
        assertThat(events).extracting(Event::getMessage).containsExactly("invalid timeZone: \"" + z + "\": unknown time zone " + z);
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> events(client, ns, "UnknownTimeZone")
                .stream().mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum() == 1);
        assertThat(jobs(client, ns)).isEmpty();
    }
}
