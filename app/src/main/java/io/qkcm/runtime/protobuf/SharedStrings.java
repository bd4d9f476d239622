package io.qkcm.runtime.protobuf;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * One String instance per short value decoded from protobuf: a namespace, a label, an image, an owner's UID or a
 * condition's type arrives in every pod, and the controllers compare them against each other (an owner
 * reference's UID against its ReplicaSet's, a label against a selector's value) and against the literals of
 * the code ("Ready", "True", "Running") once per cached pod on every sync. Shared instances make those
 * comparisons identity hits and the cache hold one copy. (Go slices strings out of the decoded buffer; a
 * fresh String per field was the JVM's price for the same read, and its comparisons one of the ReplicaSet
 * controller's hottest frames at QPS 1000.)
 *
 * <p>A lossy, direct-mapped table: a slot holds the last value whose bytes hashed to it; a value that finds
 * another in its slot is decoded as before and takes the slot. The literals the code compares with sit in a
 * second table that nothing evicts, so a decoded "True" is the literal {@code "True"}. Slots are written
 * without locks: an entry is immutable, and a lost race only costs a shared instance.
 */
final class SharedStrings {

    /** Longer values (annotations, messages, certificates) are rarely repeated and are decoded as they come. */
    static final int MAX_BYTES = 64;
    private static final int SLOTS = 1 << 14;
    private static final int MASK = SLOTS - 1;

    private record Entry(int hash, byte[] bytes, String value) {
    }

    /** The bytes eight at a time, in one read each (C1 compiles a VarHandle read to a plain load). */
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final Entry[] TABLE = new Entry[SLOTS];
    private static final Entry[] LITERALS = new Entry[1 << 9];

    static {
        // what the controllers compare decoded values with (phases, condition types and statuses, kinds, ...)
        for (String s : List.of("True", "False", "Unknown", "Ready", "ContainersReady", "Initialized",
                "PodScheduled", "PodReadyToStartContainers", "DisruptionTarget", "Running", "Pending", "Succeeded",
                "Failed", "Available", "Progressing", "ReplicaFailure", "Complete", "Suspended", "FailureTarget",
                "SuccessCriteriaMet", "NoSchedule", "NoExecute", "PreferNoSchedule", "Exists", "Equal", "In", "NotIn",
                "DoesNotExist", "TCP", "UDP", "SCTP", "Always", "IfNotPresent", "Never", "OnFailure", "ClusterFirst",
                "default-scheduler", "v1", "apps/v1", "batch/v1", "Pod", "ReplicaSet", "Deployment", "StatefulSet",
                "DaemonSet", "Job", "CronJob", "ReplicationController", "Node", "Service", "Endpoints", "default",
                "kube-system", "Orphan", "Background", "Foreground", "OrderedReady", "Parallel", "RollingUpdate",
                "Recreate", "OnDelete", "Indexed", "NonIndexed", "ClusterIP", "NodePort", "LoadBalancer",
                "ExternalName", "IPv4", "IPv6", "SingleStack", "PreferDualStack", "RequireDualStack", "Cluster",
                "Local", "Bound", "Released", "Lost", "ReadWriteOnce", "Delete", "Retain", "Filesystem", "Block",
                "Approved", "Denied")) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            int h = hash(b, b.length);
            int slot = h & (LITERALS.length - 1);
            while (LITERALS[slot] != null) { // open addressing: the literal table is filled once, never evicted
                slot = (slot + 1) & (LITERALS.length - 1);
            }
            LITERALS[slot] = new Entry(h, b, s);
        }
    }

    private SharedStrings() {
    }

    /** The String of these UTF-8 bytes ({@code length} of them): a shared instance where one is at hand. */
    static String of(byte[] bytes, int length) {
        int h = hash(bytes, length);
        for (int slot = h & (LITERALS.length - 1);; slot = (slot + 1) & (LITERALS.length - 1)) {
            Entry e = LITERALS[slot];
            if (e == null) {
                break;
            }
            if (e.hash == h && same(e.bytes, bytes, length)) {
                return e.value;
            }
        }
        int slot = h & MASK;
        Entry e = TABLE[slot];
        if (e != null && e.hash == h && same(e.bytes, bytes, length)) {
            return e.value;
        }
        byte[] own = length == bytes.length ? bytes : Arrays.copyOf(bytes, length);
        String value = new String(own, StandardCharsets.UTF_8);
        TABLE[slot] = new Entry(h, own, value);
        return value;
    }

    /**
     * A hash of every byte, read eight at a time: read one at a time, in C1's code, the hash was the first
     * frame of a JFR of protobuf decoding (285 of 1,756 samples); eight at a time, decoding per pod went from
     * 6.0 to 5.7 µs of CPU (bench/results/2026-11-28-decode-times).
     */
    static int hash(byte[] b, int length) {
        long h = length;
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            h = h * 0x9E3779B97F4A7C15L + (long) LONGS.get(b, i);
        }
        for (; i < length; i++) {
            h = 31 * h + b[i];
        }
        // MurmurHash3's 64-bit finalizer: the slot is the low bits
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (int) h;
    }

    private static boolean same(byte[] a, byte[] b, int length) {
        return a.length == length && Arrays.equals(a, 0, length, b, 0, length);
    }
}
