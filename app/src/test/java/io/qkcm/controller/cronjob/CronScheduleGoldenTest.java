package io.qkcm.controller.cronjob;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobBuilder;
import io.qkcm.controller.GoTime;
import io.qkcm.controller.cronjob.cron.ConstantDelaySchedule;
import io.qkcm.controller.cronjob.cron.CronParser;
import io.qkcm.controller.cronjob.cron.GoTimes;
import io.qkcm.controller.cronjob.cron.GoTimes.GoError;
import io.qkcm.controller.cronjob.cron.Schedule;
import io.qkcm.controller.cronjob.cron.SpecSchedule;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Golden vectors printed by upstream's own code (hack/golden/cronschedule: robfig/cron v3.0.1 and the
 * cronjob controller's helpers of Kubernetes v1.34.4): every vector must come out the same here.
 */
class CronScheduleGoldenTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    static List<JsonNode> vectors(String name) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        try (InputStream in = CronScheduleGoldenTest.class.getResourceAsStream("/cronjob/" + name);
                BufferedReader r = new BufferedReader(new InputStreamReader(new GZIPInputStream(in), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                out.add(JSON.readTree(line));
            }
        }
        return out;
    }

    private static String utc(ZonedDateTime t) {
        return GoTime.rfc3339NanoUtc(t.toInstant());
    }

    private static String text(JsonNode v, String field) {
        JsonNode n = v.get(field);
        return n == null || n.isNull() ? null : n.asText();
    }

    @Test
    void parseStandardAsRobfigCron() throws Exception {
        List<JsonNode> vectors = vectors("parse.jsonl.gz");
        assertThat(vectors).hasSizeGreaterThan(80);
        for (JsonNode v : vectors) {
            String spec = v.get("spec").asText();
            if (v.has("error")) {
                GoError error = null;
                try {
                    CronParser.parseStandard(spec);
                } catch (GoError e) {
                    error = e;
                }
                assertThat(error).as("error of %s", spec).isNotNull();
                assertThat(error.getMessage()).as("error of %s", spec).isEqualTo(v.get("error").asText());
                continue;
            }
            Schedule s = CronParser.parseStandard(spec);
            if (v.get("kind").asText().equals("every")) {
                assertThat(s).as(spec).isInstanceOf(ConstantDelaySchedule.class);
                assertThat(((ConstantDelaySchedule) s).delayNanos()).as(spec).isEqualTo(v.get("delayNs").asLong());
                continue;
            }
            SpecSchedule ss = (SpecSchedule) s;
            assertThat(ss.second()).as("second of %s", spec).isEqualTo(Long.parseUnsignedLong(v.path("second").asText("0")));
            assertThat(ss.minute()).as("minute of %s", spec).isEqualTo(Long.parseUnsignedLong(v.path("minute").asText("0")));
            assertThat(ss.hour()).as("hour of %s", spec).isEqualTo(Long.parseUnsignedLong(v.path("hour").asText("0")));
            assertThat(ss.dom()).as("dom of %s", spec).isEqualTo(Long.parseUnsignedLong(v.path("dom").asText("0")));
            assertThat(ss.month()).as("month of %s", spec).isEqualTo(Long.parseUnsignedLong(v.path("month").asText("0")));
            assertThat(ss.dow()).as("dow of %s", spec).isEqualTo(Long.parseUnsignedLong(v.path("dow").asText("0")));
            String loc = v.get("location").asText();
            assertThat(ss.location() == null ? "Local" : (ss.location().getId().equals("Z") ? "UTC" : ss.location().getId()))
                    .as("location of %s", spec).isEqualTo(loc);
        }
    }

    /** The schedule string the controller parses: upstream's formatSchedule (TZ= prefix from spec.timeZone). */
    static Schedule schedule(String spec, String timeZone) throws GoError {
        CronJob cj = new CronJobBuilder().withNewSpec().withSchedule(spec).withTimeZone(timeZone).endSpec().build();
        return CronParser.parseStandard(CronJobController.formatSchedule(cj, null));
    }

    @Test
    void nextAsRobfigCron() throws Exception {
        List<JsonNode> vectors = vectors("next.jsonl.gz");
        assertThat(vectors).hasSizeGreaterThan(5000);
        for (JsonNode v : vectors) {
            String spec = v.get("schedule").asText();
            String tz = text(v, "timeZone");
            Schedule s = schedule(spec, tz);
            ZoneId local = ZoneId.of(v.get("local").asText());
            ZonedDateTime t = ZonedDateTime.ofInstant(Instant.parse(v.get("from").asText()), local);
            List<String> got = new ArrayList<>();
            for (int i = 0; i < v.get("next").size(); i++) {
                t = s.next(t);
                got.add(utc(t));
            }
            List<String> want = new ArrayList<>();
            v.get("next").forEach(n -> want.add(n.asText()));
            assertThat(got).as("next of %s (timeZone %s, local %s) from %s", spec, tz, local, v.get("from").asText())
                    .isEqualTo(want);
        }
    }

    @Test
    void scheduleDecisionsAsUpstream() throws Exception {
        List<JsonNode> vectors = vectors("recent.jsonl.gz");
        assertThat(vectors).hasSizeGreaterThan(10000);
        for (JsonNode v : vectors) {
            String spec = v.get("schedule").asText();
            String tz = text(v, "timeZone");
            ZoneId local = ZoneId.of(v.get("local").asText());
            ZonedDateTime now = ZonedDateTime.ofInstant(Instant.parse(v.get("now").asText()), local);
            CronJob cj = new CronJobBuilder().withNewMetadata().withName("mycronjob").withNamespace("default").withUid("1a2b3c")
                    .withCreationTimestamp(v.get("creation").asText()).endMetadata()
                    .withNewSpec().withSchedule(spec).withTimeZone(tz)
                    .withStartingDeadlineSeconds(v.get("startingDeadlineSeconds").isNull() ? null : v.get("startingDeadlineSeconds").asLong())
                    .endSpec()
                    .withNewStatus().withLastScheduleTime(text(v, "lastScheduleTime")).endStatus()
                    .build();
            String what = String.format("%s (timeZone %s, local %s, created %s, last %s, deadline %s) at %s", spec, tz, local,
                    v.get("creation").asText(), text(v, "lastScheduleTime"), v.get("startingDeadlineSeconds"), v.get("now").asText());
            List<String> events = new ArrayList<>();
            EventRecorder recorder = (o, type, reason, message) -> events.add(type + " " + reason + " " + message);

            String formatted = CronJobController.formatSchedule(cj, recorder);
            assertThat(formatted).as("formatSchedule of %s", what).isEqualTo(v.get("formatted").asText());
            List<String> wantEvents = new ArrayList<>();
            v.get("formatEvents").forEach(n -> wantEvents.add(n.asText()));
            assertThat(events).as("formatSchedule events of %s", what).isEqualTo(wantEvents);
            events.clear();
            Schedule s;
            try {
                s = CronParser.parseStandard(formatted);
            } catch (GoError e) {
                assertThat(e.getMessage()).as("parse error of %s", what).isEqualTo(text(v, "parseError"));
                continue;
            }
            assertThat(text(v, "parseError")).as("parse error of %s", what).isNull();

            CronJobUtils.MostRecent r = CronJobUtils.mostRecentScheduleTime(cj, now, s, false);
            assertThat(utc(r.earliest())).as("earliest of %s", what).isEqualTo(text(v, "earliest"));
            assertThat(r.mostRecent() == null ? null : utc(r.mostRecent())).as("mostRecent of %s", what).isEqualTo(text(v, "mostRecent"));
            assertThat(r.missed().ordinal()).as("missed of %s", what).isEqualTo(v.path("missed").asInt(0));
            assertThat(r.error()).as("error of %s", what).isEqualTo(text(v, "error"));

            r = CronJobUtils.mostRecentScheduleTime(cj, now, s, true);
            assertThat(utc(r.earliest())).as("earliest (deadline) of %s", what).isEqualTo(text(v, "earliestDeadline"));
            assertThat(r.mostRecent() == null ? null : utc(r.mostRecent())).as("mostRecent (deadline) of %s", what)
                    .isEqualTo(text(v, "mostRecentDeadline"));
            assertThat(r.missed().ordinal()).as("missed (deadline) of %s", what).isEqualTo(v.path("missedDeadline").asInt(0));
            assertThat(r.error()).as("error (deadline) of %s", what).isEqualTo(text(v, "errorDeadline"));

            CronJobUtils.Next n = CronJobUtils.nextScheduleTime(cj, now, s, recorder);
            assertThat(n.time() == null ? null : utc(n.time())).as("nextScheduleTime of %s", what).isEqualTo(text(v, "nextScheduleTime"));
            assertThat(n.error()).as("nextScheduleTime error of %s", what).isEqualTo(text(v, "nextScheduleTimeError"));
            List<String> wantNextEvents = new ArrayList<>();
            v.get("nextScheduleTimeEvents").forEach(e -> wantNextEvents.add(e.asText()));
            assertThat(events).as("nextScheduleTime events of %s", what).isEqualTo(wantNextEvents);

            assertThat(CronJobUtils.nextScheduleTimeDuration(cj, now, s)).as("nextScheduleTimeDuration of %s", what)
                    .isEqualTo(v.get("requeueAfterNs").asLong());

            if (n.time() != null) {
                assertThat(CronJobUtils.getJobName(cj, n.time().toInstant())).as("job name of %s", what).isEqualTo(text(v, "jobName"));
                try {
                    var job = CronJobUtils.getJobFromTemplate2(cj, n.time().toInstant(), true, local);
                    assertThat(job.getMetadata().getAnnotations().get(CronJobUtils.SCHEDULED_TIMESTAMP_ANNOTATION))
                            .as("scheduled timestamp of %s", what).isEqualTo(text(v, "scheduledTimestamp"));
                    assertThat(text(v, "jobError")).as("job error of %s", what).isNull();
                } catch (GoError e) {
                    assertThat(e.getMessage()).as("job error of %s", what).isEqualTo(text(v, "jobError"));
                }
            }
        }
    }
}
