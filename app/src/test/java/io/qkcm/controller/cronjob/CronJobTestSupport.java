package io.qkcm.controller.cronjob;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.BaseConfigurationService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.josdk.Operators;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;

/** A CronJob controller on informers that never start, with upstream's fake controls and a set clock. */
final class CronJobTestSupport implements AutoCloseable {

    /** A clock the test sets. */
    static final class MutableClock extends Clock {
        private volatile Instant now;
        private final ZoneId zone;

        MutableClock(Instant now, ZoneId zone) {
            this.now = now;
            this.zone = zone;
        }

        void set(Instant t) {
            now = t;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return zone;
        }

        @Override
        public Clock withZone(ZoneId z) {
            return new MutableClock(now, z);
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    /** Upstream's fakeJobControl. */
    static final class FakeJobControl implements Injection.JobControl {
        Job job;
        final List<Job> jobs = new ArrayList<>();
        final List<String> deleteJobName = new ArrayList<>();
        RuntimeException err;
        RuntimeException createErr;

        @Override
        public synchronized Job getJob(String namespace, String name) {
            if (err != null) {
                throw err;
            }
            return job;
        }

        @Override
        public synchronized Job createJob(String namespace, Job j) {
            if (createErr != null) {
                throw createErr;
            }
            jobs.add(Json.mapper().convertValue(j, Job.class));
            j.getMetadata().setUid("test-uid");
            return j;
        }

        @Override
        public synchronized void deleteJob(String namespace, String name) {
            if (err != null) {
                throw err;
            }
            deleteJobName.add(name);
        }
    }

    /** Upstream's fakeCJControl. */
    static final class FakeCJControl implements Injection.CJControl {
        CronJob cronJob;
        final List<CronJob> updates = new ArrayList<>();

        @Override
        public CronJob updateStatus(CronJob cj) {
            updates.add(Json.mapper().convertValue(cj, CronJob.class));
            return cj;
        }

        @Override
        public CronJob getCronJob(String namespace, String name) {
            if (cronJob != null && name.equals(cronJob.getMetadata().getName())
                    && namespace.equals(cronJob.getMetadata().getNamespace())) {
                return cronJob;
            }
            throw Injection.notFound("cronjobs.batch", name);
        }
    }

    final KubernetesClient client = new KubernetesClientBuilder()
            .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build()).build();
    final MutableClock clock;
    final FakeJobControl jobControl = new FakeJobControl();
    final FakeCJControl cjControl = new FakeCJControl();
    final List<String> events = new ArrayList<>();
    final CronJobController controller;

    CronJobTestSupport(Instant now) {
        this(now, ZoneOffset.UTC);
    }

    CronJobTestSupport(Instant now, ZoneId local) {
        clock = new MutableClock(now, local);
        ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(), name -> Optional.ofNullable(Map.<String, String>of().get(name)));
        SharedInformers informers = new SharedInformers(client, Duration.ofHours(12));
        Operators operators = new Operators(new BaseConfigurationService(), new WorkqueueMetrics(new SimpleMeterRegistry()),
                Duration.ofSeconds(3));
        EventRecorder recorder = (o, type, reason, message) -> {
            synchronized (events) {
                events.add(type + " " + reason + " " + message);
            }
        };
        ControllerContext context = new ControllerContext(CronJobController.NAME, client, informers, recorder, options, null, operators);
        controller = new CronJobController(context, CronJobControllerDescriptor.workers(context), clock, jobControl,
                cjControl);
    }

    static KubernetesClientException apiError(int code, String reason, String message) {
        return new KubernetesClientException(new io.fabric8.kubernetes.api.model.StatusBuilder().withStatus("Failure")
                .withCode(code).withReason(reason).withMessage(message).build());
    }

    @Override
    public void close() {
        client.close();
    }
}
