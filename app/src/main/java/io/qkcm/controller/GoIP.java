package io.qkcm.controller;

import java.util.ArrayList;
import java.util.List;

/**
 * The IP handling upstream applies to pod IPs: k8s.io/utils/net ParseIPSloppy (IPv4 octets may have
 * leading zeros, read as decimal; no zones) and Go's net.IP String (IPv4 and IPv4-mapped IPv6 dotted,
 * IPv6 as RFC 5952: lower-case hex, the longest run of two or more zero groups, the first on a tie,
 * written "::"). No name resolution is ever attempted. Shared by the endpoints, endpointslice and
 * endpointslice-mirroring controllers.
 */
public final class GoIP {

    private GoIP() {
    }

    /** 16 bytes (IPv4 as IPv4-mapped, as Go holds it), or null when {@code s} is not an IP. */
    public static byte[] parseSloppy(String s) {
        if (s == null || s.isEmpty()) {
            return null;
        }
        if (s.indexOf(':') < 0) {
            byte[] v4 = parseIPv4(s);
            if (v4 == null) {
                return null;
            }
            byte[] ip = new byte[16];
            ip[10] = (byte) 0xff;
            ip[11] = (byte) 0xff;
            System.arraycopy(v4, 0, ip, 12, 4);
            return ip;
        }
        return parseIPv6(s);
    }

    /** Go's IsIPv6: a parsed address that is not IPv4 (nor IPv4-mapped). */
    public static boolean isIPv6(byte[] ip) {
        return ip != null && !isIPv4(ip);
    }

    /** Go's To4() != nil: IPv4 or IPv4-mapped. */
    public static boolean isIPv4(byte[] ip) {
        if (ip == null) {
            return false;
        }
        for (int i = 0; i < 10; i++) {
            if (ip[i] != 0) {
                return false;
            }
        }
        return (ip[10] & 0xff) == 0xff && (ip[11] & 0xff) == 0xff;
    }

    /** Go's net.IP String ("<nil>" for a nil IP). */
    public static String format(byte[] ip) {
        if (ip == null) {
            return "<nil>";
        }
        if (isIPv4(ip)) {
            return (ip[12] & 0xff) + "." + (ip[13] & 0xff) + "." + (ip[14] & 0xff) + "." + (ip[15] & 0xff);
        }
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = ((ip[2 * i] & 0xff) << 8) | (ip[2 * i + 1] & 0xff);
        }
        int zeroStart = -1;
        int zeroLen = 0;
        for (int i = 0; i < 8; i++) {
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i >= 2 && j - i > zeroLen) {
                zeroStart = i;
                zeroLen = j - i;
            }
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == zeroStart) {
                b.append("::");
                i = zeroStart + zeroLen - 1;
                continue;
            }
            if (i > 0 && b.length() > 0 && b.charAt(b.length() - 1) != ':') {
                b.append(':');
            }
            b.append(Integer.toHexString(g[i]));
        }
        return b.toString();
    }

    private static byte[] parseIPv4(String s) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            return null;
        }
        byte[] out = new byte[4];
        for (int i = 0; i < 4; i++) {
            String p = parts[i];
            if (p.isEmpty()) {
                return null;
            }
            int v = 0;
            for (char c : p.toCharArray()) {
                if (c < '0' || c > '9') {
                    return null;
                }
                v = v * 10 + (c - '0');
                if (v > 255) {
                    return null;
                }
            }
            if (v > 255) {
                return null;
            }
            out[i] = (byte) v;
        }
        return out;
    }

    private static byte[] parseIPv6(String s) {
        if (s.indexOf('%') >= 0) {
            return null;
        }
        byte[] out = new byte[16];
        int dbl = s.indexOf("::");
        if (dbl >= 0 && s.indexOf("::", dbl + 1) >= 0) {
            return null;
        }
        List<Integer> head = new ArrayList<>();
        List<Integer> tail = new ArrayList<>();
        if (dbl >= 0) {
            if (!groups(s.substring(0, dbl), head, false) || !groups(s.substring(dbl + 2), tail, true)) {
                return null;
            }
            if (head.size() + tail.size() > 7) {
                return null;
            }
        } else {
            if (!groups(s, head, true) || head.size() != 8) {
                return null;
            }
        }
        for (int i = 0; i < head.size(); i++) {
            out[2 * i] = (byte) (head.get(i) >> 8);
            out[2 * i + 1] = (byte) (int) head.get(i);
        }
        int off = 8 - tail.size();
        for (int i = 0; i < tail.size(); i++) {
            out[2 * (off + i)] = (byte) (tail.get(i) >> 8);
            out[2 * (off + i) + 1] = (byte) (int) tail.get(i);
        }
        return out;
    }

    /** Colon-separated hex groups; the last may be a dotted IPv4 (two groups) when allowed. */
    private static boolean groups(String s, List<Integer> out, boolean allowV4Tail) {
        if (s.isEmpty()) {
            return true;
        }
        String[] parts = s.split(":", -1);
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            if (i == parts.length - 1 && allowV4Tail && p.indexOf('.') >= 0) {
                byte[] v4 = parseIPv4(p);
                if (v4 == null) {
                    return false;
                }
                out.add(((v4[0] & 0xff) << 8) | (v4[1] & 0xff));
                out.add(((v4[2] & 0xff) << 8) | (v4[3] & 0xff));
                continue;
            }
            if (p.isEmpty() || p.length() > 4) {
                return false;
            }
            int v = 0;
            for (char c : p.toCharArray()) {
                int d = Character.digit(c, 16);
                if (d < 0) {
                    return false;
                }
                v = v * 16 + d;
            }
            out.add(v);
        }
        return true;
    }
}
