package io.qkcm.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

/** {@link CacheCatchUp}: the cache against a consistent list, for the pods one owner controls. */
class CacheCatchUpTest {

    private static final String OWNER = "rs-uid";

    private static Pod pod(String name, String uid, String rv, String owner, boolean terminating) {
        PodBuilder b = new PodBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid(uid)
                .withResourceVersion(rv).addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet")
                .withName("rs").withUid(owner).withController(true).endOwnerReference().endMetadata();
        if (terminating) {
            b.editMetadata().withDeletionTimestamp("2026-11-25T00:00:00Z").endMetadata();
        }
        return b.build();
    }

    private static boolean caughtUp(List<Pod> live, String listRv, List<Pod> cached) {
        Map<String, Pod> byKey = new HashMap<>();
        cached.forEach(p -> byKey.put("ns/" + p.getMetadata().getName(), p));
        return CacheCatchUp.caughtUp(OWNER, live, listRv, byKey::get, cached);
    }

    @Test
    void theSameViewIsCaughtUp() {
        List<Pod> pods = List.of(pod("a", "1", "10", OWNER, false), pod("b", "2", "11", OWNER, false));
        assertThat(caughtUp(pods, "20", pods)).isTrue();
    }

    @Test
    void aCreatedPodTheCacheHasNotSeen() {
        Pod a = pod("a", "1", "10", OWNER, false);
        Pod b = pod("b", "2", "15", OWNER, false);
        assertThat(caughtUp(List.of(a, b), "20", List.of(a))).isFalse();
    }

    @Test
    void aPodOfAnotherOwnerOrAnOrphanDoesNotCount() {
        Pod a = pod("a", "1", "10", OWNER, false);
        Pod other = pod("o", "9", "15", "another-uid", false);
        assertThat(caughtUp(List.of(a, other), "20", List.of(a))).isTrue();
    }

    @Test
    void aDeletionTheCacheHasNotSeen() {
        Pod cached = pod("a", "1", "10", OWNER, false);
        Pod live = pod("a", "1", "16", OWNER, true);
        assertThat(caughtUp(List.of(live), "20", List.of(cached))).isFalse();
        assertThat(caughtUp(List.of(live), "20", List.of(live))).isTrue();
    }

    @Test
    void aPodGoneBeforeTheListStillCached() {
        Pod a = pod("a", "1", "10", OWNER, false);
        Pod gone = pod("g", "3", "12", OWNER, false);
        assertThat(caughtUp(List.of(a), "20", List.of(a, gone))).isFalse();
    }

    @Test
    void aPodCreatedAfterTheListIsNotAGap() {
        Pod a = pod("a", "1", "10", OWNER, false);
        Pod later = pod("l", "4", "25", OWNER, false);
        assertThat(caughtUp(List.of(a), "20", List.of(a, later))).isTrue();
    }

    @Test
    void aTerminatingCachedPodDoesNotCount() {
        Pod a = pod("a", "1", "10", OWNER, false);
        Pod going = pod("t", "5", "12", OWNER, true);
        assertThat(caughtUp(List.of(a), "20", List.of(a, going))).isTrue();
    }

    @Test
    void aRecreatedNameWithAnotherUidIsNotTheSamePod() {
        Pod cachedOld = pod("a", "1", "10", OWNER, false);
        Pod liveNew = pod("a", "7", "18", OWNER, false);
        assertThat(caughtUp(List.of(liveNew), "20", List.of(cachedOld))).isFalse();
    }

    @Test
    void resourceVersionsThatAreNotNumbersNeverCountAsNewer() {
        assertThat(CacheCatchUp.newer("25", "20")).isTrue();
        assertThat(CacheCatchUp.newer("20", "20")).isFalse();
        assertThat(CacheCatchUp.newer("abc", "20")).isFalse();
        assertThat(CacheCatchUp.newer(null, "20")).isFalse();
    }
}
