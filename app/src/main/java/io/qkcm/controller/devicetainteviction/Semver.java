package io.qkcm.controller.devicetainteviction;

import java.util.ArrayList;
import java.util.List;

import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelEvaluationExceptionBuilder;
import dev.cel.runtime.CelFunctionBinding;

/**
 * A CEL {@code kubernetes.Semver} value (github.com/blang/semver/v4's Version) and Kubernetes' semver library
 * (k8s.io/apiserver/pkg/cel/library semverlib.go): {@code semver()} strict or normalizing, {@code isSemver()},
 * major/minor/patch and comparisons by semver precedence (build metadata ignored, as in equality).
 */
record Semver(long major, long minor, long patch, List<Object> pre, List<String> build) {

    private static final String NUMBERS = "0123456789";
    private static final String ALPHANUM = "-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" + NUMBERS;

    @Override
    public boolean equals(Object o) {
        return o instanceof Semver s && compare(s) == 0;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(major, minor, patch, pre);
    }

    /** semver.Parse. */
    static Semver parse(String s) {
        if (s.isEmpty()) {
            throw new IllegalArgumentException("Version string empty");
        }
        String[] parts = s.split("\\.", 3);
        if (parts.length != 3) {
            throw new IllegalArgumentException("No Major.Minor.Patch elements found");
        }
        long major = number(parts[0], "major");
        long minor = number(parts[1], "minor");
        String patchStr = parts[2];
        List<String> build = new ArrayList<>();
        List<String> prerelease = new ArrayList<>();
        int b = patchStr.indexOf('+');
        if (b != -1) {
            build = List.of(patchStr.substring(b + 1).split("\\.", -1));
            patchStr = patchStr.substring(0, b);
        }
        int p = patchStr.indexOf('-');
        if (p != -1) {
            prerelease = List.of(patchStr.substring(p + 1).split("\\.", -1));
            patchStr = patchStr.substring(0, p);
        }
        long patch = number(patchStr, "patch");
        List<Object> pre = new ArrayList<>();
        for (String pr : prerelease) {
            if (pr.isEmpty()) {
                throw new IllegalArgumentException("Prerelease is empty");
            }
            if (containsOnly(pr, NUMBERS)) {
                if (pr.length() > 1 && pr.charAt(0) == '0') {
                    throw new IllegalArgumentException("Numeric PreRelease version must not contain leading zeroes " + goQuote(pr));
                }
                pre.add(parseUint(pr));
            } else if (containsOnly(pr, ALPHANUM)) {
                pre.add(pr);
            } else {
                throw new IllegalArgumentException("Invalid character(s) found in prerelease " + goQuote(pr));
            }
        }
        for (String bs : build) {
            if (bs.isEmpty()) {
                throw new IllegalArgumentException("Build meta data is empty");
            }
            if (!containsOnly(bs, ALPHANUM)) {
                throw new IllegalArgumentException("Invalid character(s) found in build meta data " + goQuote(bs));
            }
        }
        return new Semver(major, minor, patch, List.copyOf(pre), List.copyOf(build));
    }

    private static long number(String s, String what) {
        if (!containsOnly(s, NUMBERS)) {
            throw new IllegalArgumentException("Invalid character(s) found in " + what + " number " + goQuote(s));
        }
        if (s.length() > 1 && s.charAt(0) == '0') {
            throw new IllegalArgumentException(Character.toUpperCase(what.charAt(0)) + what.substring(1)
                    + " number must not contain leading zeroes " + goQuote(s));
        }
        return parseUint(s);
    }

    /** strconv.ParseUint(s, 10, 64), its errors in Go's words. */
    private static long parseUint(String s) {
        if (s.isEmpty()) {
            throw new IllegalArgumentException("strconv.ParseUint: parsing \"\": invalid syntax");
        }
        try {
            return Long.parseUnsignedLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("strconv.ParseUint: parsing " + goQuote(s) + ": value out of range");
        }
    }

    private static boolean containsOnly(String s, String set) {
        for (int i = 0; i < s.length(); i++) {
            if (set.indexOf(s.charAt(i)) < 0) {
                return false;
            }
        }
        return true;
    }

    private static String goQuote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** normalizeAndParse: no "v" prefix, leading zeroes dropped, missing minor and patch as 0. */
    static Semver normalizeAndParse(String s) {
        if (s.startsWith("v")) {
            s = s.substring(1);
        }
        List<String> parts = new ArrayList<>(List.of(s.split("\\.", 3)));
        for (int i = 0; i < parts.size(); i++) {
            String p = parts.get(i);
            if (p.length() > 1) {
                p = p.replaceFirst("^0+", "");
                if (p.isEmpty() || NUMBERS.indexOf(p.charAt(0)) < 0) {
                    p = "0" + p;
                }
                parts.set(i, p);
            }
        }
        if (parts.size() < 3) {
            String last = parts.get(parts.size() - 1);
            if (last.contains("+") || last.contains("-")) {
                throw new IllegalArgumentException("short version cannot contain PreRelease/Build meta data");
            }
            while (parts.size() < 3) {
                parts.add("0");
            }
        }
        return parse(String.join(".", parts));
    }

    /** Version.Compare. */
    int compare(Semver o) {
        if (major != o.major) {
            return Long.compareUnsigned(major, o.major) > 0 ? 1 : -1;
        }
        if (minor != o.minor) {
            return Long.compareUnsigned(minor, o.minor) > 0 ? 1 : -1;
        }
        if (patch != o.patch) {
            return Long.compareUnsigned(patch, o.patch) > 0 ? 1 : -1;
        }
        if (pre.isEmpty() && o.pre.isEmpty()) {
            return 0;
        }
        if (pre.isEmpty()) {
            return 1;
        }
        if (o.pre.isEmpty()) {
            return -1;
        }
        int i = 0;
        for (; i < pre.size() && i < o.pre.size(); i++) {
            int c = comparePre(pre.get(i), o.pre.get(i));
            if (c != 0) {
                return c;
            }
        }
        if (i == pre.size() && i == o.pre.size()) {
            return 0;
        }
        return i == pre.size() ? -1 : 1;
    }

    /** PRVersion.Compare: a number sorts before a string; strings compare bytewise. */
    private static int comparePre(Object a, Object b) {
        if (a instanceof Long x && b instanceof Long y) {
            return Integer.signum(Long.compareUnsigned(x, y));
        }
        if (a instanceof Long) {
            return -1;
        }
        if (b instanceof Long) {
            return 1;
        }
        return Integer.signum(((String) a).compareTo((String) b));
    }

    private static CelEvaluationException error(String message) {
        return CelEvaluationExceptionBuilder.newBuilder("%s", message).build();
    }

    private static Semver parse(String s, boolean normalize) throws CelEvaluationException {
        try {
            return normalize ? normalizeAndParse(s) : parse(s);
        } catch (IllegalArgumentException e) {
            throw error(e.getMessage());
        }
    }

    private static boolean isSemver(String s, boolean normalize) {
        try {
            parse(s, normalize);
            return true;
        } catch (CelEvaluationException e) {
            return false;
        }
    }

    static List<CelFunctionBinding> bindings() {
        return List.of(
                CelFunctionBinding.from("string_to_semver", String.class, s -> parse(s, false)),
                CelFunctionBinding.from("string_bool_to_semver", String.class, Boolean.class, Semver::parse),
                CelFunctionBinding.from("is_semver_string", String.class, s -> isSemver(s, false)),
                CelFunctionBinding.from("is_semver_string_bool", String.class, Boolean.class, Semver::isSemver),
                CelFunctionBinding.from("semver_major", Semver.class, Semver::major),
                CelFunctionBinding.from("semver_minor", Semver.class, Semver::minor),
                CelFunctionBinding.from("semver_patch", Semver.class, Semver::patch),
                CelFunctionBinding.from("semver_is_greater_than", Semver.class, Semver.class, (a, b) -> a.compare(b) == 1),
                CelFunctionBinding.from("semver_is_less_than", Semver.class, Semver.class, (a, b) -> a.compare(b) == -1),
                CelFunctionBinding.from("semver_compare_to", Semver.class, Semver.class, (a, b) -> (long) a.compare(b)));
    }
}
