package io.qkcm.runtime.protobuf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

/** Short decoded strings are shared instances, and decode exactly as protobuf's own readString. */
class SharedStringsTest {

    @AfterEach
    void defaults() {
        ProtobufWire.sharedStrings(true);
    }

    private static Pod pod(String name) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace("bench").withUid("uid-" + name)
                .withLabels(Map.of("app", "web", "pod-template-hash", "5d8f7c9b6"))
                .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName("web-5d8f7c9b6")
                .withUid("0c6f2b61-2f1e-4c9a-9a51-6c9ad0f1e9a7").withController(true).endOwnerReference().endMetadata()
                .withNewSpec().addNewContainer().withName("app").withImage("registry.k8s.io/pause:3.10").endContainer()
                .endSpec().withNewStatus().withPhase("Running").addNewCondition().withType("Ready").withStatus("True")
                .endCondition().endStatus().build();
    }

    @Test
    void equalValuesOfTwoDecodedPodsAreOneInstanceAndLiteralsAreTheCodesOwn() throws Exception {
        Pod a = KubernetesProtobuf.decode(KubernetesProtobuf.encode(pod("a")), Pod.class);
        Pod b = KubernetesProtobuf.decode(KubernetesProtobuf.encode(pod("b")), Pod.class);
        assertThat(a).isEqualTo(pod("a"));
        assertThat(b).isEqualTo(pod("b"));
        assertThat(a.getMetadata().getLabels().get("app")).isSameAs(b.getMetadata().getLabels().get("app"));
        assertThat(a.getMetadata().getOwnerReferences().get(0).getUid())
                .isSameAs(b.getMetadata().getOwnerReferences().get(0).getUid());
        assertThat(a.getSpec().getContainers().get(0).getImage()).isSameAs(b.getSpec().getContainers().get(0).getImage());
        // the literals the controllers compare with: identity, so String.equals returns at its first check
        assertThat(a.getStatus().getPhase()).isSameAs("Running");
        assertThat(a.getStatus().getConditions().get(0).getType()).isSameAs("Ready");
        assertThat(a.getStatus().getConditions().get(0).getStatus()).isSameAs("True");
        assertThat(a.getMetadata().getName()).isEqualTo("a");
    }

    @Test
    void offTheSwitchEveryFieldIsItsOwnString() throws Exception {
        ProtobufWire.sharedStrings(false);
        Pod a = KubernetesProtobuf.decode(KubernetesProtobuf.encode(pod("a")), Pod.class);
        Pod b = KubernetesProtobuf.decode(KubernetesProtobuf.encode(pod("b")), Pod.class);
        assertThat(a).isEqualTo(pod("a"));
        assertThat(a.getMetadata().getLabels().get("app")).isNotSameAs(b.getMetadata().getLabels().get("app"));
        assertThat(a.getStatus().getPhase()).isNotSameAs("Running");
    }

    /** Empty, short, at the limit, past it, non-ASCII and malformed UTF-8: what CodedInputStream.readString gives. */
    @Test
    void decodesAsReadString() throws Exception {
        String ascii64 = "x".repeat(SharedStrings.MAX_BYTES);
        byte[][] values = {new byte[0], "True".getBytes(StandardCharsets.UTF_8), ascii64.getBytes(StandardCharsets.UTF_8),
                (ascii64 + "y").getBytes(StandardCharsets.UTF_8), "größe-ノード".getBytes(StandardCharsets.UTF_8),
                {(byte) 0xc3, (byte) 0x28, 'a'}, {(byte) 0xff}, "a\u0000b".getBytes(StandardCharsets.UTF_8)};
        for (byte[] v : values) {
            byte[] field = field(v);
            String expected = CodedInputStream.newInstance(field).readString();
            for (int round = 0; round < 2; round++) { // a miss, then a hit
                CodedInputStream in = CodedInputStream.newInstance(field);
                assertThat(Decoding.string(in)).as("%s", ByteString.copyFrom(v)).isEqualTo(expected);
                assertThat(in.isAtEnd()).isTrue();
            }
        }
    }

    /** Values that share a slot replace each other and stay correct. */
    @Test
    void collidingValuesStayThemselves() {
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 100_000; i++) {
                String s = "pod-" + i;
                byte[] b = s.getBytes(StandardCharsets.UTF_8);
                assertThat(SharedStrings.of(b, b.length)).isEqualTo(s);
            }
        }
    }

    /**
     * The hash reads the bytes eight at a time: values that differ in one byte anywhere (pod IPs of one
     * subnet, AWS-style node names) decode as themselves and spread over the slots as uniformly as random ones.
     */
    @Test
    void valuesThatDifferOnlyInUnreadBytesStayThemselvesAndKindsOfValuesSpread() {
        for (String s : List.of("10.244.1.23", "10.244.2.23", "10.244.3.23", "10.244.1.23")) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            assertThat(SharedStrings.of(b, b.length)).isEqualTo(s);
        }
        java.util.Random random = new java.util.Random(7);
        for (java.util.function.IntFunction<String> kind : List.<java.util.function.IntFunction<String>>of(
                i -> new java.util.UUID(random.nextLong(), random.nextLong()).toString(),
                i -> "web-7d9f8b7c5-" + Integer.toString(random.nextInt(36 * 36 * 36 * 36 * 36), 36),
                i -> "node-" + i, i -> "10.244." + (i / 250) + "." + (i % 250),
                i -> "ip-10-0-" + (i / 250) + "-" + (i % 250) + ".ec2.internal")) {
            java.util.Set<Integer> slots = new java.util.HashSet<>();
            for (int i = 0; i < 3000; i++) {
                byte[] b = kind.apply(i).getBytes(StandardCharsets.UTF_8);
                slots.add(SharedStrings.hash(b, b.length) & ((1 << 14) - 1));
            }
            // 3000 values in 16384 slots: a uniform hash fills ~2750
            assertThat(slots.size()).as(kind.apply(0)).isGreaterThan(2000);
        }
    }

    private static byte[] field(byte[] value) throws Exception {
        byte[] out = new byte[CodedOutputStream.computeUInt32SizeNoTag(value.length) + value.length];
        CodedOutputStream o = CodedOutputStream.newInstance(out);
        o.writeUInt32NoTag(value.length);
        o.writeRawBytes(value);
        o.flush();
        return out;
    }
}
