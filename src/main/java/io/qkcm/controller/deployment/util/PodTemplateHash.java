package io.qkcm.controller.deployment.util;

import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.qkcm.controller.hash.GoSpew;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * Upstream's {@code controller.ComputeHash}: FNV-32a over {@code dump.ForHash(template)} (see
 * {@link GoSpew}), then the collision count as 8 little-endian bytes (uint32 in the low four), then
 * {@code rand.SafeEncodeString} of the decimal sum.
 */
public final class PodTemplateHash {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final ObjectMapper MAPPER = io.qkcm.runtime.Json.mapper();
    private static final String ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789";

    private PodTemplateHash() {
    }

    public static String compute(PodTemplateSpec template, Integer collisionCount) {
        String text;
        try {
            text = spew(template);
        } catch (UnsupportedOperationException e) {
            // a set metadata.creationTimestamp in the template: upstream hashes it in the process's
            // local time zone, which has no portable rendering; hash a stable text instead
            org.jboss.logging.Logger.getLogger(PodTemplateHash.class)
                    .warnf("pod template hash differs from upstream's: %s", e.getMessage());
            text = spewForEquality(template);
        }
        return compute(text, collisionCount);
    }

    public static String spew(PodTemplateSpec template) {
        JsonNode json;
        try {
            json = MAPPER.readTree(SERIALIZATION.asJson(template));
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        return GoSpew.podTemplateSpec().render("v1.PodTemplateSpec", json);
    }

    /**
     * A complete rendering of the template for equality (Semantic.DeepEqual): as {@link #spew} but a
     * set timestamp renders as its instant instead of failing.
     */
    public static String spewForEquality(PodTemplateSpec template) {
        JsonNode json;
        try {
            json = MAPPER.readTree(SERIALIZATION.asJson(template));
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        return GoSpew.podTemplateSpec().renderLenient("v1.PodTemplateSpec", json);
    }

    public static String compute(String spew, Integer collisionCount) {
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
        return safeEncode(Integer.toUnsignedString(h));
    }

    /** apimachinery rand.SafeEncodeString. */
    static String safeEncode(String s) {
        StringBuilder r = new StringBuilder(s.length());
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            r.append(ALPHANUMS.charAt((b & 0xff) % ALPHANUMS.length()));
        }
        return r.toString();
    }
}
