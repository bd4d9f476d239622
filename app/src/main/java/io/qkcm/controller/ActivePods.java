package io.qkcm.controller;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * Which pods count, and in which order to delete them (upstream's FilterActivePods, ActivePods and
 * ActivePodsWithRanks in pkg/controller/controller_utils.go).
 */
public final class ActivePods {

    /** The annotation whose (int32) value orders pods for deletion: lower cost goes first. */
    public static final String POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost";

    private ActivePods() {
    }

    /** Not Succeeded, not Failed and not being deleted. */
    public static boolean isPodActive(Pod p) {
        return !PodUtil.isTerminal(p) && p.getMetadata().getDeletionTimestamp() == null;
    }

    /** Being deleted but not yet terminal. */
    public static boolean isPodTerminating(Pod p) {
        return !PodUtil.isTerminal(p) && p.getMetadata().getDeletionTimestamp() != null;
    }

    public static List<Pod> filterActivePods(List<Pod> pods) {
        List<Pod> result = new ArrayList<>();
        for (Pod p : pods) {
            if (isPodActive(p)) {
                result.add(p);
            }
        }
        return result;
    }

    public static List<Pod> filterTerminatingPods(List<Pod> pods) {
        List<Pod> result = new ArrayList<>();
        for (Pod p : pods) {
            if (isPodTerminating(p)) {
                result.add(p);
            }
        }
        return result;
    }

    /** Pods controlled by {@code controller} whose labels still match {@code selector}. */
    public static List<Pod> filterClaimedPods(HasMetadata controller, LabelSelectors.Selector selector, List<Pod> pods) {
        List<Pod> result = new ArrayList<>();
        for (Pod p : pods) {
            OwnerReference ref = ControllerRefManager.controllerOf(p);
            if (ref == null || !controller.getMetadata().getUid().equals(ref.getUid())) {
                continue;
            }
            if (selector.matches(p.getMetadata().getLabels())) {
                result.add(p);
            }
        }
        return result;
    }

    private static int phaseOrdinal(Pod p) {
        String phase = PodUtil.phase(p);
        if ("Pending".equals(phase)) {
            return 0;
        }
        if ("Unknown".equals(phase)) {
            return 1;
        }
        if ("Running".equals(phase)) {
            return 2;
        }
        return 0; // Go's map lookup of a missing key
    }

    private static String nodeName(Pod p) {
        String n = p.getSpec() == null ? null : p.getSpec().getNodeName();
        return n == null ? "" : n;
    }

    /** t1 after t2, where a zero (null) time sorts first. */
    private static boolean afterOrZero(Instant t1, Instant t2) {
        if (t1 == null || t2 == null) {
            return t1 == null;
        }
        return t1.isAfter(t2);
    }

    private static boolean sameTime(Instant a, Instant b) {
        return a == null ? b == null : a.equals(b);
    }

    /** Upstream's GetDeletionCostFromPodAnnotations; invalid values count as 0. */
    public static int deletionCost(Pod p) {
        Map<String, String> annotations = p.getMetadata().getAnnotations();
        if (annotations == null) {
            return 0;
        }
        String value = annotations.get(POD_DELETION_COST);
        if (value == null || value.isEmpty()) {
            return 0;
        }
        char first = value.charAt(0);
        boolean validFirst = first == '-' || value.equals("0") || (first >= '1' && first <= '9');
        if (!validFirst) {
            return 0;
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static int[] maxContainerRestarts(Pod pod) {
        int regular = 0;
        int sidecar = 0;
        if (pod.getStatus() != null && pod.getStatus().getContainerStatuses() != null) {
            for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
                regular = Math.max(regular, c.getRestartCount() == null ? 0 : c.getRestartCount());
            }
        }
        Set<String> sidecars = new HashSet<>();
        if (pod.getSpec() != null && pod.getSpec().getInitContainers() != null) {
            for (Container c : pod.getSpec().getInitContainers()) {
                if ("Always".equals(c.getRestartPolicy())) {
                    sidecars.add(c.getName());
                }
            }
        }
        if (pod.getStatus() != null && pod.getStatus().getInitContainerStatuses() != null) {
            for (ContainerStatus c : pod.getStatus().getInitContainerStatuses()) {
                if (sidecars.contains(c.getName())) {
                    sidecar = Math.max(sidecar, c.getRestartCount() == null ? 0 : c.getRestartCount());
                }
            }
        }
        return new int[] { regular, sidecar };
    }

    /** More restarts first; 0 when equal. */
    private static int compareMaxContainerRestarts(Pod pi, Pod pj) {
        int[] ri = maxContainerRestarts(pi);
        int[] rj = maxContainerRestarts(pj);
        if (ri[0] != rj[0]) {
            return ri[0] > rj[0] ? -1 : 1;
        }
        if (ri[1] != rj[1]) {
            return ri[1] > rj[1] ? -1 : 1;
        }
        return 0;
    }

    private static long logarithmicRankDiff(Instant t1, Instant t2, Instant now) {
        long d1 = Duration.between(t1, now).toNanos();
        long d2 = Duration.between(t2, now).toNanos();
        long r1 = -1;
        long r2 = -1;
        if (d1 > 0) {
            r1 = (long) (Math.log(d1) / Math.log(2));
        }
        if (d2 > 0) {
            r2 = (long) (Math.log(d2) / Math.log(2));
        }
        return r1 - r2;
    }

    private static int less(boolean iFirst) {
        return iFirst ? -1 : 1;
    }

    /**
     * Upstream's ActivePods order, most preferred for deletion first: unassigned before assigned;
     * Pending before Unknown before Running; not ready before ready; ready for less time; more
     * restarts; newer.
     */
    public static final Comparator<Pod> DELETION_ORDER = (pi, pj) -> {
        String ni = nodeName(pi);
        String nj = nodeName(pj);
        if (!ni.equals(nj) && (ni.isEmpty() || nj.isEmpty())) {
            return less(ni.isEmpty());
        }
        if (phaseOrdinal(pi) != phaseOrdinal(pj)) {
            return less(phaseOrdinal(pi) < phaseOrdinal(pj));
        }
        boolean ri = PodUtil.isReady(pi);
        boolean rj = PodUtil.isReady(pj);
        if (ri != rj) {
            return less(!ri);
        }
        if (ri && rj) {
            Instant t1 = PodUtil.readyTime(pi);
            Instant t2 = PodUtil.readyTime(pj);
            if (!sameTime(t1, t2)) {
                return less(afterOrZero(t1, t2));
            }
        }
        int restarts = compareMaxContainerRestarts(pi, pj);
        if (restarts != 0) {
            return restarts;
        }
        Instant c1 = PodUtil.creationTime(pi);
        Instant c2 = PodUtil.creationTime(pj);
        if (!sameTime(c1, c2)) {
            return less(afterOrZero(c1, c2));
        }
        return 0;
    };

    /** A pod with its rank (upstream: number of related active pods on the same node). */
    public record Ranked(Pod pod, int rank) {
    }

    /**
     * Upstream's ActivePodsWithRanks order (LogarithmicScaleDown is GA and locked on), most preferred
     * for deletion first: unassigned; Pending < Unknown < Running; not ready; lower
     * pod-deletion-cost (when {@code podDeletionCost} is enabled); higher rank; ready for less time
     * (log2 buckets, then UID); more restarts; newer (log2 buckets, then UID).
     */
    public static Comparator<Ranked> withRanks(Instant now, boolean podDeletionCost) {
        return (a, b) -> {
            Pod pi = a.pod();
            Pod pj = b.pod();
            String ni = nodeName(pi);
            String nj = nodeName(pj);
            if (!ni.equals(nj) && (ni.isEmpty() || nj.isEmpty())) {
                return less(ni.isEmpty());
            }
            if (phaseOrdinal(pi) != phaseOrdinal(pj)) {
                return less(phaseOrdinal(pi) < phaseOrdinal(pj));
            }
            boolean ri = PodUtil.isReady(pi);
            boolean rj = PodUtil.isReady(pj);
            if (ri != rj) {
                return less(!ri);
            }
            if (podDeletionCost) {
                int ci = deletionCost(pi);
                int cj = deletionCost(pj);
                if (ci != cj) {
                    return less(ci < cj);
                }
            }
            if (a.rank() != b.rank()) {
                return less(a.rank() > b.rank());
            }
            if (ri && rj) {
                Instant t1 = PodUtil.readyTime(pi);
                Instant t2 = PodUtil.readyTime(pj);
                if (!sameTime(t1, t2)) {
                    if (now == null || t1 == null || t2 == null) {
                        return less(afterOrZero(t1, t2));
                    }
                    long diff = logarithmicRankDiff(t1, t2, now);
                    if (diff == 0) {
                        return uidOrder(pi, pj);
                    }
                    return less(diff < 0);
                }
            }
            int restarts = compareMaxContainerRestarts(pi, pj);
            if (restarts != 0) {
                return restarts;
            }
            Instant c1 = PodUtil.creationTime(pi);
            Instant c2 = PodUtil.creationTime(pj);
            if (!sameTime(c1, c2)) {
                if (now == null || c1 == null || c2 == null) {
                    return less(afterOrZero(c1, c2));
                }
                long diff = logarithmicRankDiff(c1, c2, now);
                if (diff == 0) {
                    return uidOrder(pi, pj);
                }
                return less(diff < 0);
            }
            return 0;
        };
    }

    private static int uidOrder(Pod pi, Pod pj) {
        String ui = pi.getMetadata().getUid() == null ? "" : pi.getMetadata().getUid();
        String uj = pj.getMetadata().getUid() == null ? "" : pj.getMetadata().getUid();
        int c = ui.compareTo(uj);
        return Integer.signum(c);
    }

    /**
     * Sorts in place with a merge sort that tolerates a comparator which is not a total order (the
     * ranking's UID tie-breaks within time buckets can be intransitive, which Go's sort accepts and
     * Java's TimSort may reject).
     */
    public static <T> void sort(List<T> list, Comparator<? super T> cmp) {
        @SuppressWarnings("unchecked")
        T[] a = (T[]) list.toArray();
        @SuppressWarnings("unchecked")
        T[] tmp = (T[]) new Object[a.length];
        mergeSort(a, tmp, 0, a.length, cmp);
        for (int i = 0; i < a.length; i++) {
            list.set(i, a[i]);
        }
    }

    private static <T> void mergeSort(T[] a, T[] tmp, int from, int to, Comparator<? super T> cmp) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid, cmp);
        mergeSort(a, tmp, mid, to, cmp);
        int i = from;
        int j = mid;
        int k = from;
        while (i < mid && j < to) {
            tmp[k++] = cmp.compare(a[j], a[i]) < 0 ? a[j++] : a[i++];
        }
        while (i < mid) {
            tmp[k++] = a[i++];
        }
        while (j < to) {
            tmp[k++] = a[j++];
        }
        System.arraycopy(tmp, from, a, from, to - from);
    }
}
