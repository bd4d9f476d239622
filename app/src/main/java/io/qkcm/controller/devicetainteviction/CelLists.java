package io.qkcm.controller.devicetainteviction;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.google.common.primitives.UnsignedLong;

import dev.cel.common.values.CelByteString;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.RuntimeEquality;

/**
 * Two list libraries of Kubernetes' base environment, on cel-go's semantics and error words: cel-go's ext.Lists
 * at version 3 (slice, flatten, lists.range, reverse, distinct, sort and sortBy's {@code @sortByAssociatedKeys})
 * and Kubernetes' own lists library (k8s.io/apiserver/pkg/cel/library/lists.go: isSorted, sum, min, max,
 * indexOf, lastIndexOf). cel-java ships an ext.Lists of its own, but hides the errors' words and sorts
 * incomparable elements. Overload ids are upstream's, one binding per id.
 */
final class CelLists {

    private static final List<String> COMPARABLE = List.of("int", "uint", "double", "bool", "duration", "timestamp",
            "string", "bytes");
    /** ext.Lists names its sort overloads by the element's type name, with the protobuf names for these two. */
    private static final List<String> SORTABLE = List.of("int", "uint", "double", "bool", "google.protobuf.Duration",
            "google.protobuf.Timestamp", "string", "bytes");

    /** resource.k8s.io's CELSelectorExpressionMaxCost less lists.range's own base cost (call 1, list 10). */
    private static final long RANGE_LIMIT = 1_000_000L - 11;

    private CelLists() {
    }

    /** The element types of {@link #COMPARABLE} as the runtime holds them. */
    private static final List<Class<?>> RUNTIME_CLASSES = List.of(Long.class, UnsignedLong.class, Double.class,
            Boolean.class, Duration.class, Instant.class, String.class, CelByteString.class);

    /** Overload families one element type each (upstream's order): the call on a dyn list names them all. */
    private static final Map<String, List<String>> FAMILIES = families();

    private static Map<String, List<String>> families() {
        Map<String, List<String>> f = new LinkedHashMap<>();
        for (String t : COMPARABLE) {
            f.computeIfAbsent("isSorted", k -> new ArrayList<>()).add("list_" + t + "_is_sorted_bool");
            f.computeIfAbsent("max", k -> new ArrayList<>()).add("list_" + t + "_max_" + t);
            f.computeIfAbsent("min", k -> new ArrayList<>()).add("list_" + t + "_min_" + t);
        }
        for (String t : SORTABLE) {
            f.computeIfAbsent("sort", k -> new ArrayList<>()).add("list_" + t + "_sort");
            f.computeIfAbsent("sortByAssociatedKeys", k -> new ArrayList<>()).add("list_" + t + "_sortByAssociatedKeys");
        }
        f.put("sum", List.of("list_int_sum_int", "list_uint_sum_uint", "list_double_sum_double",
                "list_duration_sum_duration"));
        return f;
    }

    /**
     * The overload a call naming several overloads of one family dispatches to, as cel-go's dispatcher does:
     * {@code <function>@dyn}, which tries the family in order and takes the first whose element type matches
     * the list's first element (any, for an empty list). Empty when the call is not such a call.
     */
    static java.util.Optional<String> dispatchId(List<String> overloadIds) {
        if (overloadIds.size() < 2) {
            return java.util.Optional.empty();
        }
        for (Map.Entry<String, List<String>> f : FAMILIES.entrySet()) {
            if (f.getValue().containsAll(overloadIds)) {
                return java.util.Optional.of(f.getKey() + "@dyn");
            }
        }
        return java.util.Optional.empty();
    }

    static List<CelFunctionBinding> bindings(RuntimeEquality equality) {
        List<CelFunctionBinding> out = new ArrayList<>();
        out.add(CelFunctionBinding.from("isSorted@dyn", List.class, l -> {
            dispatch(l, "isSorted");
            return isSorted(l);
        }));
        out.add(CelFunctionBinding.from("max@dyn", List.class, l -> {
            dispatch(l, "max");
            return extreme(l, "max", 1);
        }));
        out.add(CelFunctionBinding.from("min@dyn", List.class, l -> {
            dispatch(l, "min");
            return extreme(l, "min", -1);
        }));
        // ext.Lists' sort overloads take any list: the element checks are sortListByAssociatedKeys' own
        out.add(CelFunctionBinding.from("sort@dyn", List.class, l -> sortByKeys(l, l)));
        out.add(CelFunctionBinding.from("sortByAssociatedKeys@dyn", List.class, List.class, CelLists::sortByKeys));
        out.add(CelFunctionBinding.from("sum@dyn", List.class, l -> {
            // int, uint, double, duration: their zero values
            Object[] zeros = { 0L, UnsignedLong.ZERO, 0.0, Duration.ZERO };
            int[] classes = { 0, 1, 2, 4 };
            for (int i = 0; i < zeros.length; i++) {
                if (l.isEmpty() || RUNTIME_CLASSES.get(classes[i]).isInstance(l.get(0))) {
                    return sum(l, zeros[i]);
                }
            }
            throw CelStrings.error("no such overload: sum(list)");
        }));
        out.add(CelFunctionBinding.from("list_slice", List.of(List.class, Long.class, Long.class),
                a -> slice((List<?>) a[0], (Long) a[1], (Long) a[2])));
        out.add(CelFunctionBinding.from("list_flatten", List.class, l -> flatten(l, 1)));
        out.add(CelFunctionBinding.from("list_flatten_int", List.class, Long.class, CelLists::flatten));
        out.add(CelFunctionBinding.from("lists_range", Long.class, n -> {
            // cel-go charges a range n + 11: beyond DRA's per-selector limit its cost tracker cancels the
            // evaluation, so such a range is never built (this runtime tracks no other cost)
            if (n > RANGE_LIMIT) {
                throw CelStrings.error("operation cancelled: actual cost limit exceeded");
            }
            List<Long> range = new ArrayList<>();
            for (long i = 0; i < n; i++) {
                range.add(i);
            }
            return range;
        }));
        out.add(CelFunctionBinding.from("list_reverse", List.class, l -> {
            List<Object> r = new ArrayList<>(l);
            java.util.Collections.reverse(r);
            return r;
        }));
        out.add(CelFunctionBinding.from("list_distinct", List.class, l -> distinct(l, equality)));
        for (String t : SORTABLE) {
            out.add(CelFunctionBinding.from("list_" + t + "_sort", List.class, l -> sortByKeys(l, l)));
            out.add(CelFunctionBinding.from("list_" + t + "_sortByAssociatedKeys", List.class, List.class,
                    CelLists::sortByKeys));
        }
        for (String t : COMPARABLE) {
            out.add(CelFunctionBinding.from("list_" + t + "_is_sorted_bool", List.class, CelLists::isSorted));
            out.add(CelFunctionBinding.from("list_" + t + "_max_" + t, List.class, l -> extreme(l, "max", 1)));
            out.add(CelFunctionBinding.from("list_" + t + "_min_" + t, List.class, l -> extreme(l, "min", -1)));
        }
        out.add(CelFunctionBinding.from("list_int_sum_int", List.class, l -> sum(l, 0L)));
        out.add(CelFunctionBinding.from("list_uint_sum_uint", List.class, l -> sum(l, UnsignedLong.ZERO)));
        out.add(CelFunctionBinding.from("list_double_sum_double", List.class, l -> sum(l, 0.0)));
        out.add(CelFunctionBinding.from("list_duration_sum_duration", List.class, l -> sum(l, Duration.ZERO)));
        out.add(CelFunctionBinding.from("list_a_index_of_int", List.class, Object.class, (l, item) -> {
            for (int i = 0; i < l.size(); i++) {
                if (equality.objectEquals(l.get(i), item)) {
                    return (long) i;
                }
            }
            return -1L;
        }));
        out.add(CelFunctionBinding.from("list_a_last_index_of_int", List.class, Object.class, (l, item) -> {
            for (int i = l.size() - 1; i >= 0; i--) {
                if (equality.objectEquals(l.get(i), item)) {
                    return (long) i;
                }
            }
            return -1L;
        }));
        return out;
    }

    /** cel-go's dispatcher: some overload's element type must be the first element's (its type guard). */
    private static void dispatch(List<?> list, String function) throws CelEvaluationException {
        if (list.isEmpty() || RUNTIME_CLASSES.stream().anyMatch(c -> c.isInstance(list.get(0)))) {
            return;
        }
        throw CelStrings.error("no such overload: " + function + "(list)");
    }

    private static List<Object> slice(List<?> list, long start, long end) throws CelEvaluationException {
        if (start < 0 || end < 0) {
            throw CelStrings.error("cannot slice(" + start + ", " + end + "), negative indexes not supported");
        }
        if (start > end) {
            throw CelStrings.error("cannot slice(" + start + ", " + end
                    + "), start index must be less than or equal to end index");
        }
        if (list.size() < end) {
            throw CelStrings.error("cannot slice(" + start + ", " + end + "), list is length " + list.size());
        }
        return new ArrayList<>(list.subList((int) start, (int) end));
    }

    private static List<Object> flatten(List<?> list, long depth) throws CelEvaluationException {
        if (depth < 0) {
            throw CelStrings.error("level must be non-negative");
        }
        List<Object> out = new ArrayList<>();
        for (Object v : list) {
            if (v instanceof List<?> nested && depth != 0) {
                out.addAll(flatten(nested, depth - 1));
            } else {
                out.add(v);
            }
        }
        return out;
    }

    private static List<Object> distinct(List<?> list, RuntimeEquality equality) {
        List<Object> unique = new ArrayList<>();
        for (Object v : list) {
            if (unique.stream().noneMatch(u -> equality.objectEquals(v, u))) {
                unique.add(v);
            }
        }
        return unique;
    }

    /**
     * cel-go's sortListByAssociatedKeys. Go's sort.Slice is an insertion sort up to 12 elements and unstable
     * beyond; this sort is stable, so elements of equal keys in longer lists may come out in another order.
     */
    private static List<Object> sortByKeys(List<?> list, List<?> keys) throws CelEvaluationException {
        if (list.size() != keys.size()) {
            throw CelStrings.error("@sortByAssociatedKeys() expected a list of the same size as the associated keys "
                    + "list, but got " + list.size() + " and " + keys.size() + " elements respectively");
        }
        if (list.isEmpty()) {
            return new ArrayList<>(list);
        }
        Object first = keys.get(0);
        if (!comparable(first)) {
            throw CelStrings.error("list elements must be comparable");
        }
        List<Integer> indices = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            if (typeOf(keys.get(i)) != typeOf(first)) {
                throw CelStrings.error("list elements must have the same type");
            }
            indices.add(i);
        }
        indices.sort((i, j) -> compare(keys.get(i), keys.get(j)));
        List<Object> sorted = new ArrayList<>();
        indices.forEach(i -> sorted.add(list.get(i)));
        return sorted;
    }

    private static boolean isSorted(Collection<?> list) {
        Object prev = null;
        for (Object next : list) {
            Integer c = prev == null ? null : compareOrNull(prev, next);
            if (c != null && c > 0) {
                return false;
            }
            prev = next;
        }
        return true;
    }

    /** upstream's cmp: keeps the first of equal elements; an incomparable pair keeps the earlier one. */
    private static Object extreme(Collection<?> list, String op, int prefer) throws CelEvaluationException {
        Object result = null;
        for (Object next : list) {
            if (result == null) {
                result = next;
            } else {
                Integer c = compareOrNull(result, next);
                if (c != null && c == -prefer) {
                    result = next;
                }
            }
        }
        if (result == null) {
            throw CelStrings.error(op + " called on empty list");
        }
        return result;
    }

    private static Object sum(Collection<?> list, Object zero) throws CelEvaluationException {
        Object acc = zero;
        for (Object next : list) {
            acc = add(acc, next);
        }
        return acc;
    }

    private static Object add(Object a, Object b) throws CelEvaluationException {
        try {
            if (a instanceof Long x && b instanceof Long y) {
                return Math.addExact(x, y);
            }
            if (a instanceof Double x && b instanceof Double y) {
                return x + y;
            }
            if (a instanceof UnsignedLong x && b instanceof UnsignedLong y) {
                if (Long.compareUnsigned(x.longValue() + y.longValue(), x.longValue()) < 0) {
                    throw CelStrings.error("unsigned integer overflow");
                }
                return x.plus(y);
            }
            if (a instanceof Duration x && b instanceof Duration y) {
                // cel-go's durations are int64 nanoseconds
                return Duration.ofNanos(Math.addExact(x.toNanos(), y.toNanos()));
            }
        } catch (ArithmeticException e) {
            throw CelStrings.error("integer overflow");
        }
        throw CelStrings.error("no such overload");
    }

    private static boolean comparable(Object v) {
        return v instanceof Long || v instanceof UnsignedLong || v instanceof Double || v instanceof Boolean
                || v instanceof Duration || v instanceof Instant || v instanceof String || v instanceof CelByteString;
    }

    private static Class<?> typeOf(Object v) {
        return v == null ? Void.class : v.getClass();
    }

    private static int compare(Object a, Object b) {
        Integer c = compareOrNull(a, b);
        return c == null ? 0 : c;
    }

    /** cel-go's Compare: numbers across int, uint and double; null where the pair has no ordering. */
    static Integer compareOrNull(Object a, Object b) {
        if (isNumber(a) && isNumber(b)) {
            return compareNumbers(a, b);
        }
        if (a instanceof Boolean x && b instanceof Boolean y) {
            return Boolean.compare(x, y);
        }
        if (a instanceof String x && b instanceof String y) {
            // Go compares the UTF-8 bytes, which orders as the code points do
            return Integer.signum(compareCodePoints(x, y));
        }
        if (a instanceof CelByteString x && b instanceof CelByteString y) {
            return Integer.signum(java.util.Arrays.compareUnsigned(x.toByteArray(), y.toByteArray()));
        }
        if (a instanceof Duration x && b instanceof Duration y) {
            return Integer.signum(x.compareTo(y));
        }
        if (a instanceof Instant x && b instanceof Instant y) {
            return Integer.signum(x.compareTo(y));
        }
        return null;
    }

    private static boolean isNumber(Object v) {
        return v instanceof Long || v instanceof UnsignedLong || v instanceof Double;
    }

    private static Integer compareNumbers(Object a, Object b) {
        if (a instanceof Double x && Double.isNaN(x) || b instanceof Double y && Double.isNaN(y)) {
            return null; // NaN is unordered
        }
        if (a instanceof Long x && b instanceof Long y) {
            return Long.signum(Long.compare(x, y));
        }
        if (a instanceof UnsignedLong x && b instanceof UnsignedLong y) {
            return Integer.signum(x.compareTo(y));
        }
        return new java.math.BigDecimal(exact(a)).compareTo(new java.math.BigDecimal(exact(b)));
    }

    private static String exact(Object v) {
        if (v instanceof Double d) {
            if (d.isInfinite()) {
                return d > 0 ? "1e400" : "-1e400";
            }
            return new java.math.BigDecimal(d).toPlainString();
        }
        return v.toString();
    }

    private static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }
}
