package io.qkcm.controller;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;

class OwnWritesTest {

    private static final String KEY = "ns/web";

    private static Deployment version(String rv) {
        return new DeploymentBuilder().withNewMetadata().withNamespace("ns").withName("web").withResourceVersion(rv)
                .endMetadata().build();
    }

    @Test
    void whileTheCacheHoldsTheReplacedVersionTheAnswerIsTheLatest() {
        OwnWrites<Deployment> w = new OwnWrites<>(true);
        Deployment answer = version("2");
        w.wrote("1", answer);
        assertThat(w.latest(KEY, version("1"))).isSameAs(answer);
        // the cache caught up: the cache again, and the answer is forgotten
        Deployment cached = version("2");
        assertThat(w.latest(KEY, cached)).isSameAs(cached);
        assertThat(w.size()).isZero();
        assertThat(w.latest(KEY, version("1"))).as("forgotten").isNotSameAs(answer);
    }

    @Test
    void aChainOfOwnWritesSupersedesEveryVersionBeforeIt() {
        OwnWrites<Deployment> w = new OwnWrites<>(true);
        w.wrote("1", version("2"));
        Deployment last = version("3");
        w.wrote("2", last);
        assertThat(w.latest(KEY, version("1"))).isSameAs(last);
        assertThat(w.latest(KEY, version("2"))).isSameAs(last);
        // a write from a version that is not the last answer starts a new chain
        Deployment other = version("9");
        w.wrote("8", other);
        assertThat(w.latest(KEY, version("2"))).as("2 is not superseded by 9's write as far as this knows")
                .isNotSameAs(other);
    }

    @Test
    void anotherWritersVersionInTheCacheWins() {
        OwnWrites<Deployment> w = new OwnWrites<>(true);
        w.wrote("1", version("2"));
        Deployment theirs = version("5");
        assertThat(w.latest(KEY, theirs)).isSameAs(theirs);
        assertThat(w.size()).isZero();
    }

    @Test
    void aDeletedObjectForgetsItsAnswer() {
        OwnWrites<Deployment> w = new OwnWrites<>(true);
        w.wrote("1", version("2"));
        assertThat(w.latest(KEY, null)).isNull();
        assertThat(w.size()).isZero();
    }

    @Test
    void theCachesEventsForgetAnswersTheyMakeOld() {
        OwnWrites<Deployment> w = new OwnWrites<>(true);
        var handler = w.forgetOnCacheUpdate();
        w.wrote("1", version("2"));
        handler.onUpdate(version("0"), version("1"));
        assertThat(w.size()).as("1 is superseded: kept").isEqualTo(1);
        handler.onUpdate(version("1"), version("2"));
        assertThat(w.size()).isZero();
        w.wrote("2", version("3"));
        handler.onDelete(version("2"), false);
        assertThat(w.size()).isZero();
    }

    @Test
    void writesThatStoredNothingAndShadowModeKeepNothing() {
        OwnWrites<Deployment> w = new OwnWrites<>(true);
        w.wrote("1", version("1")); // a no-op update or a dry run answers the same version
        assertThat(w.size()).isZero();
        OwnWrites<Deployment> shadow = new OwnWrites<>(false);
        shadow.wrote("1", version("2"));
        Deployment cached = version("1");
        assertThat(shadow.latest(KEY, cached)).isSameAs(cached);
    }

    @Test
    void answersAreKeptWithoutManagedFieldsAsTheCachesHoldObjects() {
        OwnWrites<Deployment> w = new OwnWrites<>(true);
        Deployment answer = version("2");
        answer.getMetadata().setManagedFields(java.util.List.of(new io.fabric8.kubernetes.api.model.ManagedFieldsEntry()));
        w.wrote("1", answer);
        assertThat(w.latest(KEY, version("1")).getMetadata().getManagedFields()).isNullOrEmpty();
    }
}
