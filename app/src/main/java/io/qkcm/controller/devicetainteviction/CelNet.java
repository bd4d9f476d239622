package io.qkcm.controller.devicetainteviction;

import java.util.Arrays;
import java.util.List;

import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;

/**
 * Kubernetes' IP and CIDR libraries (k8s.io/apiserver/pkg/cel/library/ip.go, cidr.go) on a port of Go's
 * net/netip parsing, formatting and predicates, so that what parses, how an address prints and the errors'
 * words (which reach events) are upstream's. IPv4-mapped IPv6 addresses and zones are refused as upstream does.
 */
final class CelNet {

    private CelNet() {
    }

    /** A netip.Addr without zone: 4 or 16 bytes. */
    record Ip(byte[] bytes) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Ip other && Arrays.equals(bytes, other.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return format(bytes);
        }

        boolean is4() {
            return bytes.length == 4;
        }

        int u16(int i) {
            return ((bytes[2 * i] & 0xff) << 8) | (bytes[2 * i + 1] & 0xff);
        }
    }

    /** A netip.Prefix: its address as written (not masked) and its bits. */
    record Cidr(Ip ip, int bits) {
        @Override
        public String toString() {
            return ip + "/" + bits;
        }
    }

    /** A parse failure in netip's words. */
    static final class ParseError extends Exception {
        ParseError(String message) {
            super(message);
        }
    }

    static List<CelFunctionBinding> bindings() {
        return List.of(
                CelFunctionBinding.from("string_to_ip", String.class, CelNet::ip),
                CelFunctionBinding.from("is_ip", String.class, s -> {
                    try {
                        parseIpAddr(s);
                        return true;
                    } catch (ParseError e) {
                        return false;
                    }
                }),
                CelFunctionBinding.from("ip_is_canonical", String.class, s -> ip(s).toString().equals(s)),
                CelFunctionBinding.from("ip_family", Ip.class, ip -> ip.is4() ? 4L : 6L),
                CelFunctionBinding.from("ip_is_unspecified", Ip.class, CelNet::isUnspecified),
                CelFunctionBinding.from("ip_is_loopback", Ip.class, CelNet::isLoopback),
                CelFunctionBinding.from("ip_is_link_local_multicast", Ip.class,
                        ip -> ip.is4() ? (ip.bytes[0] & 0xff) == 224 && ip.bytes[1] == 0 && ip.bytes[2] == 0
                                : (ip.u16(0) & 0xff0f) == 0xff02),
                CelFunctionBinding.from("ip_is_link_local_unicast", Ip.class, CelNet::isLinkLocalUnicast),
                CelFunctionBinding.from("ip_is_global_unicast", Ip.class, CelNet::isGlobalUnicast),
                CelFunctionBinding.from("ip_to_string", Ip.class, Ip::toString),
                CelFunctionBinding.from("string_to_cidr", String.class, CelNet::cidr),
                CelFunctionBinding.from("is_cidr", String.class, s -> {
                    try {
                        parseCidr(s);
                        return true;
                    } catch (ParseError e) {
                        return false;
                    }
                }),
                // upstream hands the parse error to a no-such-overload check of the CIDR: that is the error
                CelFunctionBinding.from("cidr_contains_ip_string", Cidr.class, String.class, (c, s) -> {
                    try {
                        return contains(c, parseIpAddr(s));
                    } catch (ParseError e) {
                        throw CelStrings.error("no such overload");
                    }
                }),
                CelFunctionBinding.from("cidr_contains_ip_ip", Cidr.class, Ip.class, CelNet::contains),
                CelFunctionBinding.from("cidr_contains_cidr_string", Cidr.class, String.class,
                        (c, s) -> containsCidr(c, cidr(s))),
                CelFunctionBinding.from("cidr_contains_cidr", Cidr.class, Cidr.class, CelNet::containsCidr),
                CelFunctionBinding.from("cidr_ip", Cidr.class, Cidr::ip),
                CelFunctionBinding.from("cidr_masked", Cidr.class, c -> new Cidr(mask(c.ip(), c.bits()), c.bits())),
                CelFunctionBinding.from("cidr_prefix_length", Cidr.class, c -> (long) c.bits()),
                CelFunctionBinding.from("cidr_to_string", Cidr.class, Cidr::toString));
    }

    private static Ip ip(String s) throws CelEvaluationException {
        try {
            return parseIpAddr(s);
        } catch (ParseError e) {
            throw CelStrings.error(e.getMessage());
        }
    }

    private static Cidr cidr(String s) throws CelEvaluationException {
        try {
            return parseCidr(s);
        } catch (ParseError e) {
            throw CelStrings.error("network address parse error during conversion from string: " + e.getMessage());
        }
    }

    /** upstream's parseIPAddr. */
    static Ip parseIpAddr(String raw) throws ParseError {
        Object[] parsed;
        try {
            parsed = parseAddr(raw);
        } catch (ParseError e) {
            throw new ParseError("IP Address " + quote(raw) + " parse error during conversion from string: " + e.getMessage());
        }
        if (parsed[1] != null) {
            throw new ParseError("IP address " + quote(raw) + " with zone value is not allowed");
        }
        Ip ip = (Ip) parsed[0];
        if (is4In6(ip)) {
            throw new ParseError("IPv4-mapped IPv6 address " + quote(raw) + " is not allowed");
        }
        return ip;
    }

    /** upstream's parseCIDR (its message prefix included: stringToCIDR adds it once more). */
    static Cidr parseCidr(String raw) throws ParseError {
        Cidr c;
        try {
            c = parsePrefix(raw);
        } catch (ParseError e) {
            throw new ParseError("network address parse error during conversion from string: " + e.getMessage());
        }
        if (is4In6(c.ip())) {
            throw new ParseError("IPv4-mapped IPv6 address " + quote(raw) + " is not allowed");
        }
        return c;
    }

    private static boolean is4In6(Ip ip) {
        if (ip.is4()) {
            return false;
        }
        for (int i = 0; i < 10; i++) {
            if (ip.bytes[i] != 0) {
                return false;
            }
        }
        return ip.bytes[10] == (byte) 0xff && ip.bytes[11] == (byte) 0xff;
    }

    private static boolean isZero(Ip ip) {
        for (byte b : ip.bytes) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean isUnspecified(Ip ip) {
        return isZero(ip);
    }

    private static boolean isLoopback(Ip ip) {
        if (ip.is4()) {
            return (ip.bytes[0] & 0xff) == 127;
        }
        for (int i = 0; i < 15; i++) {
            if (ip.bytes[i] != 0) {
                return false;
            }
        }
        return ip.bytes[15] == 1;
    }

    private static boolean isLinkLocalUnicast(Ip ip) {
        return ip.is4() ? (ip.bytes[0] & 0xff) == 169 && (ip.bytes[1] & 0xff) == 254 : (ip.u16(0) & 0xffc0) == 0xfe80;
    }

    private static boolean isGlobalUnicast(Ip ip) {
        if (isZero(ip)) {
            return false;
        }
        if (ip.is4() && Arrays.equals(ip.bytes, new byte[] { -1, -1, -1, -1 })) {
            return false;
        }
        boolean multicast = ip.is4() ? (ip.bytes[0] & 0xf0) == 0xe0 : (ip.bytes[0] & 0xff) == 0xff;
        return !isLoopback(ip) && !multicast && !isLinkLocalUnicast(ip);
    }

    /** netip.Prefix.Contains, without zones. */
    private static boolean contains(Cidr c, Ip ip) {
        if (c.ip().is4() != ip.is4()) {
            return false;
        }
        return Arrays.equals(mask(c.ip(), c.bits()).bytes, mask(ip, c.bits()).bytes);
    }

    /** upstream's containsCIDR: the prefixes overlap and the other is at least as long. */
    private static boolean containsCidr(Cidr c, Cidr other) {
        if (c.ip().is4() != other.ip().is4()) {
            return false;
        }
        int minBits = Math.min(c.bits(), other.bits());
        boolean overlaps = c.equals(other) || minBits == 0
                || Arrays.equals(mask(c.ip(), minBits).bytes, mask(other.ip(), minBits).bytes);
        return overlaps && c.bits() <= other.bits();
    }

    private static Ip mask(Ip ip, int bits) {
        byte[] out = ip.bytes.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, bits - 8 * i));
            out[i] = (byte) (out[i] & (0xff00 >> keep));
        }
        return new Ip(out);
    }

    /** netip.ParseAddr: the address and its zone (null without one). */
    static Object[] parseAddr(String s) throws ParseError {
        for (int i = 0; i < s.length(); i++) {
            switch (s.charAt(i)) {
                case '.':
                    return new Object[] { parseIPv4(s), null };
                case ':':
                    return parseIPv6(s);
                case '%':
                    throw addrError(s, "missing IPv6 address", null);
                default:
                    break;
            }
        }
        throw addrError(s, "unable to parse IP", null);
    }

    private static ParseError addrError(String in, String msg, String at) {
        return new ParseError("ParseAddr(" + quote(in) + "): " + msg + (at == null || at.isEmpty() ? "" : " (at " + quote(at) + ")"));
    }

    private static Ip parseIPv4(String s) throws ParseError {
        byte[] fields = new byte[4];
        parseIPv4Fields(s, 0, s.length(), fields, 0);
        return new Ip(fields);
    }

    private static void parseIPv4Fields(String in, int off, int end, byte[] fields, int into) throws ParseError {
        int val = 0;
        int pos = 0;
        int digLen = 0;
        String s = in.substring(off, end);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= '0' && c <= '9') {
                if (digLen == 1 && val == 0) {
                    throw addrError(in, "IPv4 field has octet with leading zero", null);
                }
                val = val * 10 + (c - '0');
                digLen++;
                if (val > 255) {
                    throw addrError(in, "IPv4 field has value >255", null);
                }
            } else if (c == '.') {
                if (i == 0 || i == s.length() - 1 || s.charAt(i - 1) == '.') {
                    throw addrError(in, "IPv4 field must have at least one digit", s.substring(i));
                }
                if (pos == 3) {
                    throw addrError(in, "IPv4 address too long", null);
                }
                fields[into + pos] = (byte) val;
                pos++;
                val = 0;
                digLen = 0;
            } else {
                throw addrError(in, "unexpected character", s.substring(i));
            }
        }
        if (pos < 3) {
            throw addrError(in, "IPv4 address too short", null);
        }
        fields[into + 3] = (byte) val;
    }

    private static Object[] parseIPv6(String in) throws ParseError {
        String s = in;
        String zone = null;
        int pct = s.indexOf('%');
        if (pct != -1) {
            zone = s.substring(pct + 1);
            s = s.substring(0, pct);
            if (zone.isEmpty()) {
                throw addrError(in, "zone must be a non-empty string", null);
            }
        }
        byte[] ip = new byte[16];
        int ellipsis = -1;
        if (s.length() >= 2 && s.charAt(0) == ':' && s.charAt(1) == ':') {
            ellipsis = 0;
            s = s.substring(2);
            if (s.isEmpty()) {
                return new Object[] { new Ip(ip), zone };
            }
        }
        int i = 0;
        while (i < 16) {
            int off = 0;
            int acc = 0;
            for (; off < s.length(); off++) {
                char c = s.charAt(off);
                if (c >= '0' && c <= '9') {
                    acc = (acc << 4) + (c - '0');
                } else if (c >= 'a' && c <= 'f') {
                    acc = (acc << 4) + (c - 'a' + 10);
                } else if (c >= 'A' && c <= 'F') {
                    acc = (acc << 4) + (c - 'A' + 10);
                } else {
                    break;
                }
                if (off > 3) {
                    throw addrError(in, "each group must have 4 or less digits", s);
                }
                if (acc > 0xffff) {
                    throw addrError(in, "IPv6 field has value >=2^16", s);
                }
            }
            if (off == 0) {
                throw addrError(in, "each colon-separated field must have at least one digit", s);
            }
            if (off < s.length() && s.charAt(off) == '.') {
                if (ellipsis < 0 && i != 12) {
                    throw addrError(in, "embedded IPv4 address must replace the final 2 fields of the address", s);
                }
                if (i + 4 > 16) {
                    throw addrError(in, "too many hex fields to fit an embedded IPv4 at the end of the address", s);
                }
                int end = in.length();
                if (zone != null) {
                    end -= zone.length() + 1;
                }
                parseIPv4Fields(in, end - s.length(), end, ip, i);
                s = "";
                i += 4;
                break;
            }
            ip[i] = (byte) (acc >> 8);
            ip[i + 1] = (byte) acc;
            i += 2;
            s = s.substring(off);
            if (s.isEmpty()) {
                break;
            }
            if (s.charAt(0) != ':') {
                throw addrError(in, "unexpected character, want colon", s);
            } else if (s.length() == 1) {
                throw addrError(in, "colon must be followed by more characters", s);
            }
            s = s.substring(1);
            if (s.charAt(0) == ':') {
                if (ellipsis >= 0) {
                    throw addrError(in, "multiple :: in address", s);
                }
                ellipsis = i;
                s = s.substring(1);
                if (s.isEmpty()) {
                    break;
                }
            }
        }
        if (!s.isEmpty()) {
            throw addrError(in, "trailing garbage after address", s);
        }
        if (i < 16) {
            if (ellipsis < 0) {
                throw addrError(in, "address string too short", null);
            }
            int n = 16 - i;
            for (int j = i - 1; j >= ellipsis; j--) {
                ip[j + n] = ip[j];
            }
            Arrays.fill(ip, ellipsis, ellipsis + n, (byte) 0);
        } else if (ellipsis >= 0) {
            throw addrError(in, "the :: must expand to at least one field of zeros", null);
        }
        return new Object[] { new Ip(ip), zone };
    }

    /** netip.ParsePrefix. */
    static Cidr parsePrefix(String s) throws ParseError {
        int i = s.lastIndexOf('/');
        if (i < 0) {
            throw prefixError(s, "no '/'");
        }
        Object[] parsed;
        try {
            parsed = parseAddr(s.substring(0, i));
        } catch (ParseError e) {
            throw prefixError(s, e.getMessage());
        }
        Ip ip = (Ip) parsed[0];
        if (!ip.is4() && parsed[1] != null) {
            throw prefixError(s, "IPv6 zones cannot be present in a prefix");
        }
        String bitsStr = s.substring(i + 1);
        if (bitsStr.length() > 1 && (bitsStr.charAt(0) < '1' || bitsStr.charAt(0) > '9')) {
            throw prefixError(s, "bad bits after slash: " + quote(bitsStr));
        }
        int bits;
        try {
            bits = Integer.parseInt(bitsStr);
            // strconv.Atoi takes an optional sign and ASCII digits only
            if (!bitsStr.matches("[+-]?[0-9]+")) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            throw prefixError(s, "bad bits after slash: " + quote(bitsStr));
        }
        int maxBits = ip.is4() ? 32 : 128;
        if (bits < 0 || bits > maxBits) {
            throw prefixError(s, "prefix length out of range");
        }
        return new Cidr(ip, bits);
    }

    private static ParseError prefixError(String in, String msg) {
        return new ParseError("netip.ParsePrefix(" + quote(in) + "): " + msg);
    }

    /** netip.Addr.String: dotted quad, or RFC 5952's IPv6 form. */
    static String format(byte[] b) {
        if (b.length == 4) {
            return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
        }
        Ip ip = new Ip(b);
        int zeroStart = 255;
        int zeroEnd = 255;
        for (int i = 0; i < 8; i++) {
            int j = i;
            while (j < 8 && ip.u16(j) == 0) {
                j++;
            }
            int l = j - i;
            if (l >= 2 && l > zeroEnd - zeroStart) {
                zeroStart = i;
                zeroEnd = j;
            }
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == zeroStart) {
                out.append("::");
                i = zeroEnd;
                if (i >= 8) {
                    break;
                }
            } else if (i > 0) {
                out.append(':');
            }
            out.append(Integer.toHexString(ip.u16(i)));
        }
        return out.toString();
    }

    /** Go's strconv.Quote for the inputs an error names. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        s.codePoints().forEach(c -> {
            switch (c) {
                case 0x07 -> b.append("\\a");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case 0x0B -> b.append("\\v");
                case '\\' -> b.append("\\\\");
                case '"' -> b.append("\\\"");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        b.append(String.format("\\x%02x", c));
                    } else if (c >= 0x80 && !isPrint(c)) {
                        b.append(c <= 0xffff ? String.format("\\u%04x", c) : String.format("\\U%08x", c));
                    } else {
                        b.appendCodePoint(c);
                    }
                }
            }
        });
        return b.append('"').toString();
    }

    private static boolean isPrint(int c) {
        int t = Character.getType(c);
        return t != Character.CONTROL && t != Character.FORMAT && t != Character.UNASSIGNED
                && t != Character.SURROGATE && t != Character.PRIVATE_USE && t != Character.LINE_SEPARATOR
                && t != Character.PARAGRAPH_SEPARATOR && (t != Character.SPACE_SEPARATOR || c == ' ');
    }
}
