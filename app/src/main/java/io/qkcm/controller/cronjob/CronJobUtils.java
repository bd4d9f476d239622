package io.qkcm.controller.cronjob;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.cronjob.cron.GoTimes;
import io.qkcm.controller.cronjob.cron.GoTimes.GoError;
import io.qkcm.controller.cronjob.cron.Schedule;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's utils.go: the active list, the schedule arithmetic ({@code mostRecentScheduleTime},
 * {@code nextScheduleTime}, {@code nextScheduleTimeDuration}), the Job made from the template and its
 * name, and the order old Jobs are removed in. Times are Go times: a {@link ZonedDateTime} whose zone
 * is the Go time's location ({@code time.Local} for times read from objects and the clock).
 */
final class CronJobUtils {

    /** Upstream's nextScheduleDelta: the margin past a schedule time the key is queued at. */
    static final long NEXT_SCHEDULE_DELTA_NANOS = 100_000_000L;
    private static final long SECOND = 1_000_000_000L;
    /** batch/v1's CronJobScheduledTimestampAnnotation. */
    static final String SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp";

    /** Upstream's missedSchedulesType; the ordinal is upstream's value. */
    enum MissedSchedules {
        NONE, FEW, MANY
    }

    /** mostRecentScheduleTime's results: the earliest time considered, the most recent unmet one or null. */
    record MostRecent(ZonedDateTime earliest, ZonedDateTime mostRecent, MissedSchedules missed, String error) {
    }

    /** nextScheduleTime's results: the unmet time to start a Job for, or null; and the error, or null. */
    record Next(ZonedDateTime time, String error) {
    }

    private CronJobUtils() {
    }

    /** A metav1.Time as kube-controller-manager decodes it: located in the process's local zone. */
    static ZonedDateTime time(String rfc3339, ZoneId local) {
        if (rfc3339 == null || rfc3339.isEmpty()) {
            return GoTimes.ZERO;
        }
        return ZonedDateTime.ofInstant(Instant.parse(rfc3339), local);
    }

    static boolean inActiveList(CronJob cj, String uid) {
        for (ObjectReference j : active(cj)) {
            if (Objects.equals(j.getUid(), uid)) {
                return true;
            }
        }
        return false;
    }

    static boolean inActiveListByName(CronJob cj, String namespace, String name) {
        for (ObjectReference j : active(cj)) {
            if (Objects.equals(j.getName(), name) && Objects.equals(j.getNamespace(), namespace)) {
                return true;
            }
        }
        return false;
    }

    static void deleteFromActiveList(CronJob cj, String uid) {
        if (cj == null) {
            return;
        }
        List<ObjectReference> kept = new ArrayList<>();
        for (ObjectReference j : active(cj)) {
            if (!Objects.equals(j.getUid(), uid)) {
                kept.add(j);
            }
        }
        cj.getStatus().setActive(kept);
    }

    static List<ObjectReference> active(CronJob cj) {
        if (cj.getStatus() == null || cj.getStatus().getActive() == null) {
            return List.of();
        }
        return cj.getStatus().getActive();
    }

    /**
     * Upstream's mostRecentScheduleTime: from the last schedule time (or the creation time, or now minus
     * startingDeadlineSeconds when later and asked for), the most recent schedule time not after now,
     * and how many were missed (estimated from the gap between the next two).
     */
    static MostRecent mostRecentScheduleTime(CronJob cj, ZonedDateTime now, Schedule schedule,
            boolean includeStartingDeadlineSeconds) {
        ZoneId local = now.getZone();
        ZonedDateTime earliest = time(cj.getMetadata().getCreationTimestamp(), local);
        MissedSchedules missed = MissedSchedules.NONE;
        String last = cj.getStatus() == null ? null : cj.getStatus().getLastScheduleTime();
        if (last != null) {
            earliest = time(last, local);
        }
        Long deadline = cj.getSpec().getStartingDeadlineSeconds();
        if (includeStartingDeadlineSeconds && deadline != null) {
            ZonedDateTime schedulingDeadline = GoTimes.add(now, -SECOND * deadline);
            if (schedulingDeadline.toInstant().isAfter(earliest.toInstant())) {
                earliest = schedulingDeadline;
            }
        }
        ZonedDateTime t1 = schedule.next(earliest);
        ZonedDateTime t2 = schedule.next(t1);
        if (now.toInstant().isBefore(t1.toInstant())) {
            return new MostRecent(earliest, null, missed, null);
        }
        if (now.toInstant().isBefore(t2.toInstant())) {
            return new MostRecent(earliest, t1, missed, null);
        }
        long timeBetweenTwoSchedules = (long) seconds(round(GoTimes.sub(t2, t1), SECOND));
        if (timeBetweenTwoSchedules < 1) {
            return new MostRecent(earliest, null, missed, "time difference between two schedules is less than 1 second");
        }
        long timeElapsed = (long) seconds(GoTimes.sub(now, t1));
        long numberOfMissedSchedules = timeElapsed / timeBetweenTwoSchedules + 1;
        ZonedDateTime mostRecent = null;
        ZonedDateTime potentialEarliest = GoTimes.add(t1,
                (numberOfMissedSchedules - 1 - 1) * timeBetweenTwoSchedules * SECOND);
        for (ZonedDateTime t = schedule.next(potentialEarliest); !t.toInstant().isAfter(now.toInstant()); t = schedule.next(t)) {
            if (GoTimes.isZero(t)) {
                break; // upstream would walk on from year 1; a schedule yielding no time ends here
            }
            mostRecent = t;
        }
        if (numberOfMissedSchedules > 100) {
            missed = MissedSchedules.MANY;
        } else if (numberOfMissedSchedules > 0) {
            missed = MissedSchedules.FEW;
        }
        return new MostRecent(earliest, mostRecent, missed, null);
    }

    /** Go's Duration.Round. */
    static long round(long d, long m) {
        if (m <= 0) {
            return d;
        }
        long r = d % m;
        if (d < 0) {
            r = -r;
            if (lessThanHalf(r, m)) {
                return d + r;
            }
            long d1 = d - m + r;
            return d1 < d ? d1 : Long.MIN_VALUE;
        }
        if (lessThanHalf(r, m)) {
            return d - r;
        }
        long d1 = d + m - r;
        return d1 > d ? d1 : Long.MAX_VALUE;
    }

    private static boolean lessThanHalf(long x, long y) {
        return Long.compareUnsigned(x + x, y) < 0;
    }

    /** Go's Duration.Seconds. */
    static double seconds(long d) {
        long sec = d / 1_000_000_000L;
        long nsec = d % 1_000_000_000L;
        return (double) sec + (double) nsec / 1e9;
    }

    /**
     * Upstream's nextScheduleTimeDuration: how long until the schedule time after the most recent one
     * (or after now, when that one is unknown), plus {@link #NEXT_SCHEDULE_DELTA_NANOS}; nanoseconds,
     * negative when already due.
     */
    static long nextScheduleTimeDuration(CronJob cj, ZonedDateTime now, Schedule schedule) {
        MostRecent r = mostRecentScheduleTime(cj, now, schedule, false);
        ZonedDateTime mostRecent;
        if (r.error() != null) {
            mostRecent = now;
        } else if (r.mostRecent() == null) {
            mostRecent = r.missed() == MissedSchedules.NONE ? r.earliest() : now;
        } else {
            mostRecent = r.mostRecent();
        }
        return GoTimes.sub(GoTimes.add(schedule.next(mostRecent), NEXT_SCHEDULE_DELTA_NANOS), now);
    }

    /**
     * Upstream's nextScheduleTime: the unmet schedule time to start a Job for (within the starting
     * deadline), or null; records TooManyMissedTimes when more than 100 were missed.
     */
    static Next nextScheduleTime(CronJob cj, ZonedDateTime now, Schedule schedule, EventRecorder recorder) {
        MostRecent r = mostRecentScheduleTime(cj, now, schedule, true);
        if (r.mostRecent() == null || r.mostRecent().toInstant().isAfter(now.toInstant())) {
            return new Next(null, r.error());
        }
        if (r.missed() == MissedSchedules.MANY) {
            recorder.event(cj, EventRecorder.WARNING, "TooManyMissedTimes",
                    "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew");
        }
        return new Next(r.mostRecent(), r.error());
    }

    /** Upstream's getJobName: the CronJob's name and the scheduled time in Unix minutes. */
    static String getJobName(CronJob cj, Instant scheduledTime) {
        return cj.getMetadata().getName() + "-" + getTimeHashInMinutes(scheduledTime);
    }

    static long getTimeHashInMinutes(Instant scheduledTime) {
        return scheduledTime.getEpochSecond() / 60;
    }

    /**
     * Upstream's getJobFromTemplate2: the template's labels and annotations, the scheduled-timestamp
     * annotation (CronJobsScheduledAnnotation) in the CronJob's time zone, the deterministic name, the
     * CronJob as controller, the template's spec. As upstream's, the Job carries no namespace (the
     * create request names it).
     */
    static Job getJobFromTemplate2(CronJob cj, Instant scheduledTime, boolean scheduledAnnotation, ZoneId local)
            throws GoError {
        var template = cj.getSpec().getJobTemplate();
        Map<String, String> labels = new HashMap<>();
        Map<String, String> annotations = new HashMap<>();
        if (template != null && template.getMetadata() != null) {
            if (template.getMetadata().getLabels() != null) {
                labels.putAll(template.getMetadata().getLabels());
            }
            if (template.getMetadata().getAnnotations() != null) {
                annotations.putAll(template.getMetadata().getAnnotations());
            }
        }
        String name = getJobName(cj, scheduledTime);
        if (scheduledAnnotation) {
            String tz = cj.getSpec().getTimeZone();
            ZoneId zone = GoTimes.loadLocation(tz == null ? "" : tz);
            annotations.put(SCHEDULED_TIMESTAMP_ANNOTATION, GoTimes.rfc3339(scheduledTime, zone == null ? local : zone));
        }
        var spec = template == null || template.getSpec() == null ? null
                : io.qkcm.runtime.DeepCopy.of(template.getSpec());
        return new JobBuilder().withNewMetadata()
                .withName(name)
                .withLabels(labels)
                .withAnnotations(annotations)
                .withOwnerReferences(ControllerRefManager.newControllerRef(cj, "batch/v1", "CronJob"))
                .endMetadata()
                .withSpec(spec)
                .build();
    }

    /** Upstream's byJobStartTime: by status.startTime (unset last), then by name. */
    static final Comparator<Job> BY_JOB_START_TIME = (a, b) -> {
        Instant sa = startTime(a);
        Instant sb = startTime(b);
        if (sa == null && sb != null) {
            return 1;
        }
        if (sa != null && sb == null) {
            return -1;
        }
        if (Objects.equals(sa, sb)) {
            return a.getMetadata().getName().compareTo(b.getMetadata().getName());
        }
        return sa.compareTo(sb);
    };

    private static Instant startTime(Job j) {
        return j.getStatus() == null || j.getStatus().getStartTime() == null ? null : Instant.parse(j.getStatus().getStartTime());
    }
}
