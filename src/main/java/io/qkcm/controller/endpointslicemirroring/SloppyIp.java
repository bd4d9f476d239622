package io.qkcm.controller.endpointslicemirroring;

/**
 * k8s.io/utils/net ParseIPSloppy (Go's pre-1.17 net.ParseIP, which accepts IPv4 octets with leading
 * zeros) and Go's IP.String, so mirrored addresses are re-stringified exactly as upstream does. Written
 * by hand because InetAddress would resolve anything that is not a literal through DNS.
 */
final class SloppyIp {

    private static final int BIG = 0xFFFFFF;

    private SloppyIp() {
    }

    /** The 16-byte form of {@code s} (IPv4 as IPv4-mapped), or null when it is not an IP address. */
    static byte[] parse(String s) {
        if (s == null) {
            return null;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '.') {
                return parseIPv4(s);
            }
            if (c == ':') {
                return parseIPv6(s);
            }
        }
        return null;
    }

    /** True when the 16 bytes are an IPv4(-mapped) address, as Go's To4. */
    static boolean isIPv4(byte[] ip) {
        for (int i = 0; i < 10; i++) {
            if (ip[i] != 0) {
                return false;
            }
        }
        return ip[10] == (byte) 0xff && ip[11] == (byte) 0xff;
    }

    /** Go's IP.String: dotted quad for IPv4, RFC 5952 (longest zero run of 2+ groups as ::) for IPv6. */
    static String format(byte[] ip) {
        if (isIPv4(ip)) {
            return (ip[12] & 0xff) + "." + (ip[13] & 0xff) + "." + (ip[14] & 0xff) + "." + (ip[15] & 0xff);
        }
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = ((ip[2 * i] & 0xff) << 8) | (ip[2 * i + 1] & 0xff);
        }
        int zeroStart = 255;
        int zeroEnd = 255;
        for (int i = 0; i < 8; i++) {
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            int l = j - i;
            if (l >= 2 && l > zeroEnd - zeroStart) {
                zeroStart = i;
                zeroEnd = j;
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == zeroStart) {
                sb.append("::");
                i = zeroEnd;
                if (i >= 8) {
                    break;
                }
            } else if (i > 0) {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }

    private static byte[] parseIPv4(String s) {
        byte[] p = new byte[4];
        int pos = 0;
        for (int i = 0; i < 4; i++) {
            if (pos >= s.length()) {
                return null;
            }
            if (i > 0) {
                if (s.charAt(pos) != '.') {
                    return null;
                }
                pos++;
            }
            int n = 0;
            int c = 0;
            while (pos + c < s.length() && s.charAt(pos + c) >= '0' && s.charAt(pos + c) <= '9') {
                n = n * 10 + (s.charAt(pos + c) - '0');
                if (n >= BIG) {
                    return null;
                }
                c++;
            }
            if (c == 0 || n > 0xFF) {
                return null;
            }
            pos += c;
            p[i] = (byte) n;
        }
        if (pos != s.length()) {
            return null;
        }
        byte[] ip = new byte[16];
        ip[10] = (byte) 0xff;
        ip[11] = (byte) 0xff;
        System.arraycopy(p, 0, ip, 12, 4);
        return ip;
    }

    private static byte[] parseIPv6(String s) {
        byte[] ip = new byte[16];
        int ellipsis = -1;
        if (s.length() >= 2 && s.charAt(0) == ':' && s.charAt(1) == ':') {
            ellipsis = 0;
            s = s.substring(2);
            if (s.isEmpty()) {
                return ip;
            }
        }
        int i = 0;
        while (i < 16) {
            int n = 0;
            int c = 0;
            for (; c < s.length(); c++) {
                int d = hex(s.charAt(c));
                if (d < 0) {
                    break;
                }
                n = n * 16 + d;
                if (n >= BIG) {
                    return null;
                }
            }
            if (c == 0 || n > 0xFFFF) {
                return null;
            }
            if (c < s.length() && s.charAt(c) == '.') {
                if (ellipsis < 0 && i != 12) {
                    return null;
                }
                if (i + 4 > 16) {
                    return null;
                }
                byte[] ip4 = parseIPv4(s);
                if (ip4 == null) {
                    return null;
                }
                System.arraycopy(ip4, 12, ip, i, 4);
                s = "";
                i += 4;
                break;
            }
            ip[i] = (byte) (n >> 8);
            ip[i + 1] = (byte) n;
            i += 2;
            s = s.substring(c);
            if (s.isEmpty()) {
                break;
            }
            if (s.charAt(0) != ':' || s.length() == 1) {
                return null;
            }
            s = s.substring(1);
            if (s.charAt(0) == ':') {
                if (ellipsis >= 0) {
                    return null;
                }
                ellipsis = i;
                s = s.substring(1);
                if (s.isEmpty()) {
                    break;
                }
            }
        }
        if (!s.isEmpty()) {
            return null;
        }
        if (i < 16) {
            if (ellipsis < 0) {
                return null;
            }
            int n = 16 - i;
            for (int j = i - 1; j >= ellipsis; j--) {
                ip[j + n] = ip[j];
            }
            for (int j = ellipsis + n - 1; j >= ellipsis; j--) {
                ip[j] = 0;
            }
        } else if (ellipsis >= 0) {
            return null;
        }
        return ip;
    }

    private static int hex(char ch) {
        if (ch >= '0' && ch <= '9') {
            return ch - '0';
        }
        if (ch >= 'a' && ch <= 'f') {
            return ch - 'a' + 10;
        }
        if (ch >= 'A' && ch <= 'F') {
            return ch - 'A' + 10;
        }
        return -1;
    }
}
