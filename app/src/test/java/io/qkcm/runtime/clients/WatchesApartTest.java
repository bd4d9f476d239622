package io.qkcm.runtime.clients;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Which requests are watches, as the API server reads the query: the first {@code watch} value, false only
 * when absent, "0" or "false" (apimachinery's Convert_Slice_string_To_bool). The routing itself is shown
 * against a real API server in SharedTransportsTest.
 */
class WatchesApartTest {

    @Test
    void aWatchValueOtherThanFalseIsAWatch() {
        assertThat(WatchesApart.isWatch("/api/v1/pods?watch=true&resourceVersion=5")).isTrue();
        assertThat(WatchesApart.isWatch("/api/v1/pods?allowWatchBookmarks=true&watch=true")).isTrue();
        assertThat(WatchesApart.isWatch("https://127.0.0.1:6443/apis/apps/v1/replicasets?watch=1")).isTrue();
        assertThat(WatchesApart.isWatch("/api/v1/pods?watch=t")).isTrue();
        assertThat(WatchesApart.isWatch("/api/v1/pods?watch")).isTrue();
        assertThat(WatchesApart.isWatch("/api/v1/pods?w%61tch=true")).isTrue();
    }

    @Test
    void absentZeroOrFalseIsARequest() {
        assertThat(WatchesApart.isWatch("/api/v1/pods")).isFalse();
        assertThat(WatchesApart.isWatch("/api/v1/pods?watch=false")).isFalse();
        assertThat(WatchesApart.isWatch("/api/v1/pods?watch=FALSE")).isFalse();
        assertThat(WatchesApart.isWatch("/api/v1/pods?watch=0&watch=true")).isFalse();
        assertThat(WatchesApart.isWatch("/api/v1/pods?allowWatchBookmarks=true")).isFalse();
        assertThat(WatchesApart.isWatch("/api/v1/namespaces/watch/pods?limit=500")).isFalse();
        assertThat(WatchesApart.isWatch("/api/v1/pods?labelSelector=watch%3Dtrue")).isFalse();
        assertThat(WatchesApart.isWatch(null)).isFalse();
    }
}
