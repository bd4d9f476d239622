package io.qkcm.runtime.protobuf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.qkcm.runtime.Json;

/**
 * The wire's special types and edge cases, on hand-made messages: each decodes to what fabric8's decoding of
 * the JSON the API server would send for the same object gives.
 */
class ProtobufSpecialTypesTest {

    /** A message written field by field. */
    static final class Wire {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final CodedOutputStream out = CodedOutputStream.newInstance(bytes);

        Wire str(int field, String s) throws IOException {
            out.writeString(field, s);
            return this;
        }

        Wire varint(int field, long v) throws IOException {
            out.writeInt64(field, v);
            return this;
        }

        Wire bytes(int field, byte[] b) throws IOException {
            out.writeByteArray(field, b);
            return this;
        }

        Wire msg(int field, Wire m) throws IOException {
            out.writeByteArray(field, m.build());
            return this;
        }

        Wire entry(int field, String key, String value) throws IOException {
            return msg(field, new Wire().str(1, key).str(2, value));
        }

        byte[] build() throws IOException {
            out.flush();
            return bytes.toByteArray();
        }
    }

    private static byte[] envelope(String apiVersion, String kind, Wire object) throws IOException {
        byte[] unknown = new Wire().msg(1, new Wire().str(1, apiVersion).str(2, kind)).bytes(2, object.build())
                .str(4, KubernetesProtobuf.MEDIA_TYPE).build();
        byte[] body = new byte[4 + unknown.length];
        System.arraycopy(new byte[] { 'k', '8', 's', 0 }, 0, body, 0, 4);
        System.arraycopy(unknown, 0, body, 4, unknown.length);
        return body;
    }

    private static CodedInputStream in(Wire message) throws IOException {
        // as an embedded message: its length first
        byte[] m = message.build();
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        CodedOutputStream o = CodedOutputStream.newInstance(b);
        o.writeUInt32NoTag(m.length);
        o.writeRawBytes(m);
        o.flush();
        return CodedInputStream.newInstance(b.toByteArray());
    }

    @Test
    void timeIsWholeSecondsInUtcAndItsNanosAreDropped() throws IOException {
        // 2026-11-27T10:00:00Z with 999 ms: JSON (and upstream's proto unmarshalling) keep the second
        assertThat(Decoding.time(in(new Wire().varint(1, 1_795_773_600L).varint(2, 999_000_000)))).isEqualTo(
                "2026-11-27T10:00:00Z");
        assertThat(Decoding.time(in(new Wire().varint(1, 0)))).isEqualTo("1970-01-01T00:00:00Z");
        // the zero Time is an empty message, and JSON's null
        assertThat(Decoding.time(in(new Wire()))).isNull();
    }

    /**
     * Times are written without DateTimeFormatter: the same text as the pattern writes, over random seconds
     * from year 1 to 9999, leap days, the epoch and the limits; year 0 as Go writes it ("0000", where the
     * pattern's year-of-era wrote "0001"); years beyond 9999 as the formatter writes them (Go refuses to).
     * One second's text is one String.
     */
    @Test
    void timeTextIsTheFormattersAndOneSecondIsOneString() throws IOException {
        java.time.format.DateTimeFormatter seconds = java.time.format.DateTimeFormatter
                .ofPattern("yyyy-MM-dd'T'HH:mm:ss'Z'").withZone(java.time.ZoneOffset.UTC);
        java.time.format.DateTimeFormatter micros = java.time.format.DateTimeFormatter
                .ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(java.time.ZoneOffset.UTC);
        long min = java.time.Instant.parse("0001-01-01T00:00:00Z").getEpochSecond();
        long max = java.time.Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
        assertThat(Decoding.time(in(new Wire().varint(1, min - 1)))).isEqualTo("0000-12-31T23:59:59Z");
        java.util.List<Long> cases = new java.util.ArrayList<>(java.util.List.of(0L, -1L, 1L, min, max, max + 1,
                java.time.Instant.parse("2024-02-29T23:59:59Z").getEpochSecond(),
                java.time.Instant.parse("2000-02-29T12:00:00Z").getEpochSecond(), 1_795_773_600L));
        java.util.Random random = new java.util.Random(42);
        for (int i = 0; i < 20_000; i++) {
            cases.add(min + (long) (random.nextDouble() * (max - min)));
        }
        for (long s : cases) {
            java.time.Instant t = java.time.Instant.ofEpochSecond(s);
            assertThat(Decoding.Seconds.format(s)).as("second %d", s).isEqualTo(seconds.format(t));
            assertThat(Decoding.time(in(new Wire().varint(1, s)))).as("second %d", s).isEqualTo(seconds.format(t));
            int nanos = random.nextInt(1_000_000_000);
            assertThat(Decoding.microTime(in(new Wire().varint(1, s).varint(2, nanos)))).as("second %d nanos %d", s, nanos)
                    .isEqualTo(micros.format(t.plusNanos(nanos)));
        }
        assertThat(Decoding.time(in(new Wire().varint(1, 1_795_773_601L))))
                .isSameAs(Decoding.time(in(new Wire().varint(1, 1_795_773_601L).varint(2, 5))));
        // a second 1024 seconds later takes the same slot: its own text, then the first one's again
        assertThat(Decoding.time(in(new Wire().varint(1, 1_795_773_601L + 1024)))).isEqualTo("2026-11-27T10:17:05Z");
        assertThat(Decoding.time(in(new Wire().varint(1, 1_795_773_601L)))).isEqualTo("2026-11-27T10:00:01Z");
    }

    @Test
    void microTimeHasSixFractionDigitsTruncated() throws IOException {
        assertThat(Decoding.microTime(in(new Wire().varint(1, 1_795_773_600L).varint(2, 123_456_789))))
                .isEqualTo("2026-11-27T10:00:00.123456Z");
        assertThat(Decoding.microTime(in(new Wire().varint(1, 1_795_773_600L)))).isEqualTo(
                "2026-11-27T10:00:00.000000Z");
        assertThat(Decoding.microTime(in(new Wire()))).isNull();
    }

    /** fabric8's LeaseSpec times are ZonedDateTimes: decoded in protobuf, equal to Jackson's, zone and all. */
    @Test
    void microTimeZonedIsWhatJacksonDecodes() throws IOException {
        java.time.ZonedDateTime json = io.qkcm.runtime.Json.api().unmarshal(
                "{\"acquireTime\":\"2026-11-27T10:00:00.123456Z\"}",
                io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec.class).getAcquireTime();
        java.time.ZonedDateTime proto = Decoding.microTimeZoned(in(new Wire().varint(1, 1_795_773_600L).varint(2, 123_456_789)));
        assertThat(proto).isEqualTo(json);
        assertThat(proto.getZone()).isEqualTo(json.getZone()).isNotEqualTo(java.time.ZoneId.of("UTC"));
    }

    @Test
    void intOrStringByItsType() throws IOException {
        IntOrString negative = Decoding.intOrString(in(new Wire().varint(1, 0).varint(2, -5)));
        assertThat(negative).isEqualTo(new IntOrString(-5));
        assertThat(negative.getIntVal()).isEqualTo(-5);
        // a string with a stale intVal beside it: the type decides
        assertThat(Decoding.intOrString(in(new Wire().varint(1, 1).varint(2, 7).str(3, "50%"))))
                .isEqualTo(new IntOrString("50%"));
        // all defaults: int 0, as JSON's 0
        assertThat(Decoding.intOrString(in(new Wire()))).isEqualTo(new IntOrString(0));
    }

    @Test
    void quantityKeepsItsString() throws IOException {
        Quantity q = Decoding.quantity(in(new Wire().str(1, "1500m")));
        assertThat(q).isEqualTo(new Quantity("1500m"));
        assertThat(q.toString()).isEqualTo("1500m");
        assertThat(Json.api().asJson(q)).isEqualTo("\"1500m\"");
    }

    @Test
    void durationIsGoDurationString() {
        assertThat(Decoding.goDuration(0)).isEqualTo("0s");
        assertThat(Decoding.goDuration(999)).isEqualTo("999ns");
        assertThat(Decoding.goDuration(1_500)).isEqualTo("1.5µs");
        assertThat(Decoding.goDuration(1_000_000)).isEqualTo("1ms");
        assertThat(Decoding.goDuration(1_500_000_000L)).isEqualTo("1.5s");
        assertThat(Decoding.goDuration(90_000_000_000L)).isEqualTo("1m30s");
        assertThat(Decoding.goDuration(3_600_000_000_000L)).isEqualTo("1h0m0s");
        assertThat(Decoding.goDuration(-2_000_000_000L)).isEqualTo("-2s");
    }

    @Test
    void mapsKeepWireOrderAndAnAbsentMapIsJsonsAbsentMap() throws IOException {
        ConfigMap ordered = KubernetesProtobuf.decode(envelope("v1", "ConfigMap", new Wire()
                .msg(1, new Wire().str(1, "cm")).entry(2, "b", "2").entry(2, "a", "").entry(2, "c", "3")), ConfigMap.class);
        assertThat(new ArrayList<>(ordered.getData().keySet())).containsExactly("b", "a", "c");
        assertThat(ordered.getData()).containsEntry("a", "");
        assertThat(ordered).isEqualTo(Json.api().unmarshal(
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\"},\"data\":{\"b\":\"2\",\"a\":\"\",\"c\":\"3\"}}",
                ConfigMap.class));

        ConfigMap absent = KubernetesProtobuf.decode(envelope("v1", "ConfigMap", new Wire().msg(1, new Wire().str(1, "cm"))),
                ConfigMap.class);
        assertThat(absent).isEqualTo(Json.api().unmarshal(
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\"}}", ConfigMap.class));
    }

    @Test
    void bytesAreBase64AsInJson() throws IOException {
        Secret secret = KubernetesProtobuf.decode(envelope("v1", "Secret", new Wire().msg(1, new Wire().str(1, "s"))
                .msg(2, new Wire().str(1, "bin").bytes(2, new byte[] { 0, (byte) 0xff, 10 }))
                .msg(2, new Wire().str(1, "empty").bytes(2, new byte[0]))), Secret.class);
        assertThat(secret.getData()).containsEntry("bin", "AP8K").containsEntry("empty", "");
    }

    @Test
    void goZeroOfAnOmitemptyScalarIsAbsentAndAnEmptySliceWithoutOmitemptyIsNull() throws IOException {
        // gogo writes ObjectMeta's namespace and generation even when empty/0; JSON leaves them out
        ClusterRole role = KubernetesProtobuf.decode(envelope("rbac.authorization.k8s.io/v1", "ClusterRole",
                new Wire().msg(1, new Wire().str(1, "r").str(3, "").varint(7, 0))), ClusterRole.class);
        assertThat(role.getMetadata().getNamespace()).isNull();
        assertThat(role.getMetadata().getGeneration()).isNull();
        // ClusterRole.rules has no omitempty: an empty one is JSON's "rules": null
        assertThat(role.getRules()).isNull();
        assertThat(role).isEqualTo(Json.api().unmarshal("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":"
                + "\"ClusterRole\",\"metadata\":{\"name\":\"r\"},\"rules\":null}", ClusterRole.class));
    }

    @Test
    void aFieldFabric8HasNoPropertyForLandsInAdditionalPropertiesAsJsonPutsIt() throws IOException {
        // VolumeProjection.podCertificate (Kubernetes 1.34) has no property in fabric8 7.4's VolumeProjection
        Wire podCertificate = new Wire().str(1, "example.com/signer").str(2, "").varint(3, 3600);
        Wire volume = new Wire().str(1, "v").msg(2, new Wire().msg(26, new Wire().msg(1, new Wire().msg(6, podCertificate))));
        Pod pod = KubernetesProtobuf.decode(envelope("v1", "Pod", new Wire().msg(1, new Wire().str(1, "p"))
                .msg(2, new Wire().msg(1, volume))), Pod.class);
        Pod fromJson = Json.api().unmarshal("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                + "\"spec\":{\"containers\":null,\"volumes\":[{\"name\":\"v\",\"projected\":{\"sources\":[{\"podCertificate\":"
                + "{\"signerName\":\"example.com/signer\",\"maxExpirationSeconds\":3600}}]}}]}}", Pod.class);
        assertThat(pod.getSpec().getVolumes().get(0).getProjected().getSources().get(0).getAdditionalProperties())
                .containsKey("podCertificate");
        assertThat(pod).isEqualTo(fromJson);
        assertThat(Json.api().asJson(pod)).isEqualTo(Json.api().asJson(fromJson));
    }

    @Test
    void aValueProtobufHasNoFieldForRefusesTheEncodingInsteadOfBeingDropped() throws IOException {
        Pod pod = Json.api().unmarshal("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                + "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"fromTheFuture\":true}]}}", Pod.class);
        assertThatThrownBy(() -> KubernetesProtobuf.encode(pod)).isInstanceOf(ProtobufEncodingException.class)
                .hasMessageContaining("Container.additionalProperties");
        pod.getSpec().getContainers().get(0).getAdditionalProperties().clear();
        Pod back = KubernetesProtobuf.decode(KubernetesProtobuf.encode(pod), Pod.class);
        assertThat(back.getSpec().getContainers()).isEqualTo(pod.getSpec().getContainers());
    }

    @Test
    void encodedSpecialTypesDecodeToThemselves() throws IOException {
        ConfigMap cm = Json.api().unmarshal("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
                + "\"creationTimestamp\":\"2026-11-27T10:00:00Z\",\"labels\":{\"z\":\"1\",\"a\":\"\"}},"
                + "\"data\":{\"k\":\"v\"},\"binaryData\":{\"b\":\"AP8K\"}}", ConfigMap.class);
        ConfigMap back = KubernetesProtobuf.decode(KubernetesProtobuf.encode(cm), ConfigMap.class);
        assertThat(back).isEqualTo(cm);
        assertThat(new ArrayList<>(back.getMetadata().getLabels().keySet())).containsExactly("z", "a");
        io.fabric8.kubernetes.api.model.Service svc = Json.api().unmarshal("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
                + "\"metadata\":{\"name\":\"s\"},\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":-1},"
                + "{\"port\":81,\"targetPort\":\"http\"}]}}", io.fabric8.kubernetes.api.model.Service.class);
        io.fabric8.kubernetes.api.model.Service svcBack = KubernetesProtobuf.decode(KubernetesProtobuf.encode(svc),
                io.fabric8.kubernetes.api.model.Service.class);
        assertThat(svcBack.getSpec().getPorts()).isEqualTo(svc.getSpec().getPorts());
    }

    @Test
    void aFieldNumberTheDescriptorsDoNotHaveFailsTheDecodingInsteadOfBeingDropped() throws IOException {
        byte[] newer = envelope("v1", "ConfigMap", new Wire().msg(1, new Wire().str(1, "cm")).str(99, "from a newer API"));
        assertThatThrownBy(() -> KubernetesProtobuf.decode(newer)).isInstanceOf(ProtobufDecodingException.class)
                .satisfies(e -> assertThat(((ProtobufDecodingException) e).reason())
                        .isEqualTo(ProtobufDecodingException.Reason.UNKNOWN_FIELD))
                .hasMessageContaining("ConfigMap has no field 99");
        // nested too
        byte[] nested = envelope("v1", "ConfigMap", new Wire().msg(1, new Wire().str(1, "cm").varint(42, 1)));
        assertThatThrownBy(() -> KubernetesProtobuf.decode(nested)).hasMessageContaining("ObjectMeta has no field 42");
    }

    @Test
    void kindsWithoutDecoderAndBodiesWithoutEnvelopeAreRefused() throws IOException {
        byte[] claim = envelope("resource.k8s.io/v1", "ResourceClaim", new Wire().msg(1, new Wire().str(1, "c")));
        assertThatThrownBy(() -> KubernetesProtobuf.decode(claim)).isInstanceOf(ProtobufDecodingException.class)
                .satisfies(e -> assertThat(((ProtobufDecodingException) e).reason())
                        .isEqualTo(ProtobufDecodingException.Reason.NOT_DECODABLE))
                .hasMessageContaining("not generated");
        byte[] widget = envelope("example.com/v1", "Widget", new Wire());
        assertThatThrownBy(() -> KubernetesProtobuf.decode(widget)).hasMessageContaining("not a kind this build decodes");
        assertThatThrownBy(() -> KubernetesProtobuf.decode("{\"kind\":\"Pod\"}".getBytes(StandardCharsets.UTF_8)))
                .satisfies(e -> assertThat(((ProtobufDecodingException) e).reason())
                        .isEqualTo(ProtobufDecodingException.Reason.MALFORMED));
        assertThat(KubernetesProtobuf.canDecode(Pod.class)).isTrue();
        assertThat(KubernetesProtobuf.canDecode(io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice.class)).isTrue();
        assertThat(KubernetesProtobuf.canDecode(io.fabric8.kubernetes.api.model.GenericKubernetesResource.class)).isFalse();
        assertThat(KubernetesProtobuf.notDecodable()).containsKey("resource.k8s.io/v1/ResourceClaim");
    }

    @Test
    void watchFramesSpanChunksAndChunksHoldSeveralFrames() throws IOException {
        ByteBuffer stream = ByteBuffer.allocate(64);
        stream.putInt(3).put(new byte[] { 1, 2, 3 }).putInt(0).putInt(2).put(new byte[] { 4, 5 }).flip();
        byte[] all = new byte[stream.remaining()];
        stream.get(all);
        for (int chunk = 1; chunk <= all.length; chunk++) {
            ProtobufWatchFrames frames = new ProtobufWatchFrames();
            List<byte[]> got = new ArrayList<>();
            for (int i = 0; i < all.length; i += chunk) {
                got.addAll(frames.feed(ByteBuffer.wrap(all, i, Math.min(chunk, all.length - i))));
            }
            assertThat(got).as("chunks of %d", chunk).containsExactly(new byte[] { 1, 2, 3 }, new byte[0], new byte[] { 4, 5 });
        }
        ProtobufWatchFrames blocking = new ProtobufWatchFrames(new java.io.ByteArrayInputStream(all));
        assertThat(blocking.next()).containsExactly(1, 2, 3);
        assertThat(blocking.next()).isEmpty();
        assertThat(blocking.next()).containsExactly(4, 5);
        assertThat(blocking.next()).isNull();
    }
}
