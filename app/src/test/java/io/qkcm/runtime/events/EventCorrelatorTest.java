package io.qkcm.runtime.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;

/** client-go's event correlation: repeats are counted, similar events combined, spam dropped. */
class EventCorrelatorTest {

    private final EventCorrelator correlator = new EventCorrelator();
    private final ObjectReference rs = new ObjectReferenceBuilder().withApiVersion("apps/v1").withKind("ReplicaSet")
            .withNamespace("ns").withName("web-abc").withUid("uid-1").build();

    private Event event(String message) {
        return EventBroadcaster.newEvent("replicaset-controller", rs, "Normal", "SuccessfulCreate", message, Instant.now());
    }

    /** What the API server would return for a written event. */
    private static Event stored(Event e, String resourceVersion) {
        return new EventBuilder(e).editMetadata().withResourceVersion(resourceVersion).endMetadata().build();
    }

    @Test
    void newEventsCarryUpstreamsShape() {
        Event e = event("Created pod: web-abc-x1");
        assertThat(e.getMetadata().getName()).startsWith("web-abc.");
        assertThat(e.getMetadata().getNamespace()).isEqualTo("ns");
        assertThat(e.getSource().getComponent()).isEqualTo("replicaset-controller");
        assertThat(e.getCount()).isEqualTo(1);
        assertThat(e.getFirstTimestamp()).isEqualTo(e.getLastTimestamp());
        EventCorrelator.Result r = correlator.correlate(e);
        assertThat(r.skip()).isFalse();
        assertThat(r.update()).isFalse();
    }

    @Test
    void aRepeatIsACountIncrementOfTheStoredEvent() {
        Event first = event("Created pod: web-abc-x1");
        EventCorrelator.Result r1 = correlator.correlate(first);
        correlator.updateState(stored(r1.event(), "10"));

        EventCorrelator.Result r2 = correlator.correlate(event("Created pod: web-abc-x1"));
        assertThat(r2.update()).isTrue();
        assertThat(r2.event().getMetadata().getName()).isEqualTo(first.getMetadata().getName());
        assertThat(r2.event().getCount()).isEqualTo(2);
        assertThat(r2.event().getFirstTimestamp()).isEqualTo(first.getFirstTimestamp());
        correlator.updateState(stored(r2.event(), "11"));
        assertThat(correlator.correlate(event("Created pod: web-abc-x1")).event().getCount()).isEqualTo(3);
    }

    @Test
    void similarEventsBeyondTenAreCombined() {
        for (int i = 0; i < EventCorrelator.AGGREGATE_MAX_EVENTS - 1; i++) {
            EventCorrelator.Result r = correlator.correlate(event("Created pod: web-abc-" + i));
            assertThat(r.event().getMessage()).doesNotStartWith("(combined");
            correlator.updateState(stored(r.event(), "1" + i));
        }
        EventCorrelator.Result tenth = correlator.correlate(event("Created pod: web-abc-tenth"));
        assertThat(tenth.event().getMessage()).isEqualTo("(combined from similar events): Created pod: web-abc-tenth");
        assertThat(tenth.update()).isFalse();
        correlator.updateState(stored(tenth.event(), "30"));
        // further similar events count up on the combined event
        EventCorrelator.Result next = correlator.correlate(event("Created pod: web-abc-eleventh"));
        assertThat(next.update()).isTrue();
        assertThat(next.event().getMetadata().getName()).isEqualTo(tenth.event().getMetadata().getName());
        assertThat(next.event().getCount()).isEqualTo(2);
    }

    @Test
    void aSourceMayBurst25EventsAboutAnObjectThenIsDropped() {
        int written = 0;
        for (int i = 0; i < 40; i++) {
            EventCorrelator.Result r = correlator.correlate(event("Created pod: same"));
            if (!r.skip()) {
                written++;
                correlator.updateState(stored(r.event(), Integer.toString(i)));
            }
        }
        assertThat(written).isEqualTo(EventCorrelator.SPAM_BURST);
    }
}
