package io.qkcm.controller.bootstrap;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * k8s.io/cluster-bootstrap's token/jws: the detached JWS (RFC 7515 appendix F) of a content for a
 * bootstrap token, as go-jose v2 writes it and {@code kubeadm join} checks it: HS256 keyed with the
 * token secret, protected header {@code {"alg":"HS256","kid":"<token-id>"}} (go-jose's JSON: keys
 * sorted, Go's string escaping), compact serialization with the payload part left empty
 * ({@code header..signature}), base64url without padding. hack/golden/bootstrap's vectors pin it.
 */
final class Jws {

    private static final Base64.Encoder B64URL = Base64.getUrlEncoder().withoutPadding();

    private Jws() {
    }

    /** ComputeDetachedSignature. */
    static String computeDetachedSignature(String content, String tokenId, byte[] tokenSecret) {
        String header = "{\"alg\":\"HS256\",\"kid\":" + goJsonString(tokenId) + "}";
        String protectedHeader = B64URL.encodeToString(header.getBytes(StandardCharsets.UTF_8));
        String payload = B64URL.encodeToString(content.getBytes(StandardCharsets.UTF_8));
        byte[] mac = hmacSha256(tokenSecret, (protectedHeader + "." + payload).getBytes(StandardCharsets.US_ASCII));
        return protectedHeader + ".." + B64URL.encodeToString(mac);
    }

    /** DetachedTokenIsValid: {@code detachedToken} is this content's signature for the token. */
    static boolean detachedTokenIsValid(String detachedToken, String content, String tokenId, byte[] tokenSecret) {
        String expected = computeDetachedSignature(content, tokenId, tokenSecret);
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8),
                detachedToken.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] hmacSha256(byte[] key, byte[] input) {
        // HMAC pads a key to the hash's block size with zeros: an empty key (which Go accepts and the
        // JDK's key spec does not) is the same key as 64 zero bytes
        byte[] k = key.length == 0 ? new byte[64] : key;
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(k, "HmacSHA256"));
            return mac.doFinal(input);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is unavailable", e);
        }
    }

    /** A JSON string as Go's encoding/json writes it (HTML-escaped, U+2028/U+2029 escaped). */
    static String goJsonString(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '<', '>', '&', '\u2028', '\u2029' -> b.append(String.format("\\u%04x", (int) c));
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else if (Character.isSurrogate(c) && !(Character.isHighSurrogate(c) && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1)))
                            && !(Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1)))) {
                        b.append("\\ufffd"); // Go writes invalid UTF-8 as the replacement character
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
