package io.qkcm.controller.hash;

import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * Upstream's {@code controller.ComputeHash(template, collisionCount)} for every controller that names
 * objects after a pod template (the DaemonSet's revisions, the Deployment's ReplicaSets' pod-template-hash):
 * FNV-32a over {@code dump.ForHash(template)}
 * ({@link GoSpew}), then the collision count as 8 little-endian bytes, then
 * {@code rand.SafeEncodeString} of the decimal sum. Golden vectors: {@code hack/golden/podtemplatehash}.
 */
public final class ControllerHash {

    private static final KubernetesSerialization SERIALIZATION = io.qkcm.runtime.Json.api();
    private static final String ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789";

    private ControllerHash() {
    }

    public static String computeHash(PodTemplateSpec template, Integer collisionCount) {
        JsonNode json = json(template);
        String text;
        try {
            text = GoSpew.podTemplateSpec().render("v1.PodTemplateSpec", json);
        } catch (UnsupportedOperationException e) {
            // a set metadata.creationTimestamp in the template: upstream renders it in its local time
            // zone, which has no portable rendering; hash a stable text instead
            org.jboss.logging.Logger.getLogger(ControllerHash.class)
                    .warnf("pod template hash differs from upstream's: %s", e.getMessage());
            text = GoSpew.podTemplateSpec().renderLenient("v1.PodTemplateSpec", json);
        }
        return computeHash(text, collisionCount);
    }

    /** {@code dump.ForHash(template)}: the text that is hashed. */
    public static String spew(PodTemplateSpec template) {
        return GoSpew.podTemplateSpec().render("v1.PodTemplateSpec", json(template));
    }

    /**
     * A complete rendering of the template for equality (Semantic.DeepEqual): as {@link #spew} but a
     * set timestamp renders as its instant instead of failing.
     */
    public static String spewForEquality(PodTemplateSpec template) {
        return GoSpew.podTemplateSpec().renderLenient("v1.PodTemplateSpec", json(template));
    }

    /**
     * {@link #spewForEquality} of the template without one of its labels (upstream's EqualIgnoreHash drops
     * pod-template-hash from copies): the label is removed from the rendered tree, so the template is
     * neither copied nor changed.
     */
    public static String spewForEqualityWithoutLabel(PodTemplateSpec template, String label) {
        JsonNode json = json(template);
        if (json.path("metadata").path("labels") instanceof ObjectNode labels && labels.remove(label) != null
                && labels.isEmpty()) {
            ((ObjectNode) json.get("metadata")).remove("labels");
        }
        return GoSpew.podTemplateSpec().renderLenient("v1.PodTemplateSpec", json);
    }

    /** The template as a JSON tree, without a text in between (the tree holds what the text would). */
    private static JsonNode json(PodTemplateSpec template) {
        return SERIALIZATION.convertValue(template, JsonNode.class);
    }

    /** The hash of a spew text. */
    public static String computeHash(String spew, Integer collisionCount) {
        int h = 0x811c9dc5;
        for (byte b : spew.getBytes(StandardCharsets.UTF_8)) {
            h ^= (b & 0xff);
            h *= 0x01000193;
        }
        if (collisionCount != null) {
            int c = collisionCount;
            byte[] bytes = {(byte) c, (byte) (c >>> 8), (byte) (c >>> 16), (byte) (c >>> 24), 0, 0, 0, 0};
            for (byte b : bytes) {
                h ^= (b & 0xff);
                h *= 0x01000193;
            }
        }
        return safeEncodeString(Integer.toUnsignedString(h));
    }

    /** apimachinery's rand.SafeEncodeString. */
    public static String safeEncodeString(String s) {
        StringBuilder r = new StringBuilder(s.length());
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            r.append(ALPHANUMS.charAt((b & 0xff) % ALPHANUMS.length()));
        }
        return r.toString();
    }
}
