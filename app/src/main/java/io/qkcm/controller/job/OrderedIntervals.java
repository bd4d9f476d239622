package io.qkcm.controller.job;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.jboss.logging.Logger;

/**
 * Upstream's orderedIntervals: a sorted list of disjoint, non-adjacent index intervals, written as
 * {@code status.completedIndexes}/{@code failedIndexes} ("1,3-5,7": a pair of consecutive indexes is
 * written "a,b", three or more "a-b").
 */
public final class OrderedIntervals {

    private static final Logger LOG = Logger.getLogger(OrderedIntervals.class);

    /** An interval of indexes, both ends included. */
    public record Interval(int first, int last) {
    }

    public static final OrderedIntervals EMPTY = new OrderedIntervals(List.of());

    private final List<Interval> intervals;

    private OrderedIntervals(List<Interval> intervals) {
        this.intervals = intervals;
    }

    public static OrderedIntervals of(Interval... intervals) {
        return new OrderedIntervals(List.of(intervals));
    }

    public List<Interval> intervals() {
        return intervals;
    }

    public int size() {
        return intervals.size();
    }

    public boolean isEmpty() {
        return intervals.isEmpty();
    }

    /** Upstream's withOrderedIndexes: these intervals plus {@code sortedIndexes} (ascending). */
    public OrderedIntervals withOrderedIndexes(Collection<Integer> sortedIndexes) {
        List<Interval> n = new ArrayList<>(sortedIndexes.size());
        for (int ix : sortedIndexes) {
            n.add(new Interval(ix, ix));
        }
        return merge(new OrderedIntervals(n));
    }

    /** Upstream's merge of two ordered interval lists. */
    public OrderedIntervals merge(OrderedIntervals other) {
        List<int[]> result = new ArrayList<>();
        List<Interval> a = intervals;
        List<Interval> b = other.intervals;
        int i = 0;
        int j = 0;
        while (i < a.size() && j < b.size()) {
            if (a.get(i).first() < b.get(j).first()) {
                appendOrMerge(result, a.get(i++));
            } else {
                appendOrMerge(result, b.get(j++));
            }
        }
        while (i < a.size()) {
            appendOrMerge(result, a.get(i++));
        }
        while (j < b.size()) {
            appendOrMerge(result, b.get(j++));
        }
        List<Interval> out = new ArrayList<>(result.size());
        for (int[] r : result) {
            out.add(new Interval(r[0], r[1]));
        }
        return new OrderedIntervals(out);
    }

    private static void appendOrMerge(List<int[]> result, Interval iv) {
        int[] last = result.isEmpty() ? null : result.get(result.size() - 1);
        if (last == null || iv.first() > last[1] + 1) {
            result.add(new int[] { iv.first(), iv.last() });
        } else if (last[1] < iv.last()) {
            last[1] = iv.last();
        }
    }

    /** How many indexes the intervals hold. */
    public int total() {
        int count = 0;
        for (Interval iv : intervals) {
            count += iv.last() - iv.first() + 1;
        }
        return count;
    }

    /** Whether {@code ix} is in one of the intervals (binary search, as upstream). */
    public boolean has(int ix) {
        int lo = 0;
        int hi = intervals.size();
        while (hi > lo) {
            int mid = lo + (hi - lo) / 2;
            if (intervals.get(mid).last() >= ix) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if (hi == intervals.size()) {
            return false;
        }
        return intervals.get(hi).first() <= ix;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (Interval v : intervals) {
            if (b.length() > 0) {
                b.append(',');
            }
            b.append(v.first());
            if (v.last() > v.first()) {
                b.append(v.last() == v.first() + 1 ? ',' : '-');
                b.append(v.last());
            }
        }
        return b.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OrderedIntervals other && intervals.equals(other.intervals);
    }

    @Override
    public int hashCode() {
        return intervals.hashCode();
    }

    /**
     * Upstream's parseIndexesFromString: intervals at or past {@code completions} are dropped (an
     * interval reaching past it is cut), corrupted intervals are skipped, adjacent ones joined.
     */
    public static OrderedIntervals parse(String indexesStr, int completions) {
        if (indexesStr == null || indexesStr.isEmpty()) {
            return EMPTY;
        }
        List<int[]> result = new ArrayList<>();
        for (String intervalStr : indexesStr.split(",", -1)) {
            String[] limits = intervalStr.split("-", -1);
            long first;
            try {
                first = atoi(limits[0]);
            } catch (NumberFormatException e) {
                LOG.infof("Corrupted indexes interval, ignoring: interval=%s", intervalStr);
                continue;
            }
            if (first >= completions) {
                break;
            }
            long last;
            if (limits.length > 1) {
                try {
                    last = atoi(limits[1]);
                } catch (NumberFormatException e) {
                    LOG.infof("Corrupted indexes interval, ignoring: interval=%s", intervalStr);
                    continue;
                }
                if (last >= completions) {
                    last = completions - 1;
                }
            } else {
                last = first;
            }
            int[] prev = result.isEmpty() ? null : result.get(result.size() - 1);
            if (prev != null && prev[1] == first - 1) {
                prev[1] = (int) last;
            } else {
                result.add(new int[] { (int) first, (int) last });
            }
        }
        List<Interval> out = new ArrayList<>(result.size());
        for (int[] r : result) {
            out.add(new Interval(r[0], r[1]));
        }
        return new OrderedIntervals(out);
    }

    /** Go's strconv.Atoi: an optional sign and decimal digits. */
    static long atoi(String s) {
        if (s.isEmpty()) {
            throw new NumberFormatException("empty");
        }
        return Long.parseLong(s);
    }
}
