package io.qkcm.controller.hash;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * Upstream's {@code hashutil.DeepHashObject} with an md5 hasher: the digest of the value's
 * {@code dump.ForHash} text. Where upstream sorts by such digests (endpoint ports, subsets), the
 * order is visible in the objects it writes, so qkcm computes the same digests.
 */
public final class DeepHash {

    private static final KubernetesSerialization SERIALIZATION = io.qkcm.runtime.Json.api();
    private static final ObjectMapper MAPPER = io.qkcm.runtime.Json.mapper();

    private DeepHash() {
    }

    /** md5 over the spew text of {@code value} (a fabric8 model object) as Go type {@code goType}. */
    public static byte[] md5(GoSpew layout, String goType, Object value) {
        return md5(layout.render(goType, toJson(value)));
    }

    public static String md5Hex(GoSpew layout, String goType, Object value) {
        return HexFormat.of().formatHex(md5(layout, goType, value));
    }

    static byte[] md5(String text) {
        try {
            return MessageDigest.getInstance("MD5").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static JsonNode toJson(Object value) {
        try {
            return MAPPER.readTree(SERIALIZATION.asJson(value));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
