package io.qkcm.runtime.informers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.concurrent.CancellationException;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager.WatchRequestState;

/** Which ends of a watch request are opened again at once (client-go's reflector) and which back off. */
class WatchRequestTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void theServersCleanEndAfterAnEventWatchesAgainAtOnceHoweverShort() {
        WatchRequest r = new WatchRequest(new WatchRequestState());
        r.eventReceived();
        assertThat(r.endsCleanly(null, false, r.sentNanos + 1)).isTrue();
    }

    @Test
    void aCleanEndWithoutAnEventIsAVeryShortWatchUnderASecond() {
        WatchRequest r = new WatchRequest(new WatchRequestState());
        assertThat(r.endsCleanly(null, false, r.sentNanos + SECOND - 1)).isFalse();
        assertThat(r.endsCleanly(null, false, r.sentNanos + SECOND)).isTrue();
    }

    @Test
    void aTransportErrorBacksOff() {
        WatchRequest r = new WatchRequest(new WatchRequestState());
        r.eventReceived();
        assertThat(r.endsCleanly(new IOException("reset"), false, r.sentNanos + 10 * SECOND)).isFalse();
    }

    @Test
    void theCancelOfARequestClosedHereIsNotAnError() {
        // fabric8's Reflector closes each watch every 5-10 minutes, as the server's timeoutSeconds does for client-go
        WatchRequest r = new WatchRequest(new WatchRequestState());
        r.eventReceived();
        assertThat(r.endsCleanly(new CancellationException(), true, r.sentNanos + 10 * SECOND)).isTrue();
    }

    @Test
    void anErrorEventOrStatusBacksOffWhateverTheEnd() {
        WatchRequest r = new WatchRequest(new WatchRequestState());
        r.eventReceived();
        r.failed();
        assertThat(r.endsCleanly(null, false, r.sentNanos + 10 * SECOND)).isFalse();
        assertThat(r.endsCleanly(new CancellationException(), true, r.sentNanos + 10 * SECOND)).isFalse();
    }
}
