package io.qkcm.controller.ttl;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Upstream's TestDesiredTTL: one node added or deleted from a given state, and the TTL that follows. */
class TTLBoundariesTest {

    @ParameterizedTest(name = "{0} from {1} nodes, TTL {2}, step {3} → {4}")
    @CsvSource({
            "add, 0, 0, 0, 0",
            "add, 99, 0, 0, 0",
            "add, 100, 0, 0, 15",
            "delete, 101, 15, 1, 15",
            "delete, 91, 15, 1, 15",
            "add, 91, 15, 1, 15",
            "delete, 90, 15, 1, 0",
            "delete, 1800, 300, 4, 60",
            "delete, 10000, 300, 4, 300",
    })
    void desiredTTL(String change, int nodeCount, int desiredTTL, int boundaryStep, int expectedTTL) {
        TTLBoundaries b = new TTLBoundaries(nodeCount, desiredTTL, boundaryStep);
        if (change.equals("add")) {
            b.nodeAdded();
        } else {
            b.nodeDeleted();
        }
        assertThat(b.desiredTTLSeconds()).isEqualTo(expectedTTL);
    }

    @ParameterizedTest(name = "TTL {1} → {0}")
    @CsvSource({
            "'{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\"}}}', 0",
            "'{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"10\"}}}', 10",
            "'{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"300\"}}}', 300",
    })
    void patchIsUpstreamsTwoWayMergePatch(String patch, int ttl) {
        // upstream's TestPatchNode: the patch holds the one annotation, whatever else the node carries
        assertThat(TTLController.annotationPatch(TTLController.OBJECT_TTL_ANNOTATION_KEY, ttl)).isEqualTo(patch);
    }
}
