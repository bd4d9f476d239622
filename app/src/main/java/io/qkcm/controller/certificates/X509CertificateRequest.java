package io.qkcm.controller.certificates;

import java.nio.charset.StandardCharsets;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PSSParameterSpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.qkcm.pki.Der;

/**
 * A PKCS#10 certificate request as Go's {@code x509.ParseCertificateRequest} reads it (the fields the
 * certificate controllers use), and upstream's {@code certificates.ParseCSR} (pkg/apis/certificates
 * helpers): the first PEM block must be a {@code CERTIFICATE REQUEST}. The subject is read as Go's
 * {@code pkix.Name} (only the string values of the attributes it knows; the last CN wins), the
 * subjectAltName of the extension request as Go's (DNS, email, URI and IP names; others ignored).
 * JDK and {@link Der} only, no BouncyCastle.
 */
public final class X509CertificateRequest {

    static final String OID_EXTENSION_REQUEST = "1.2.840.113549.1.9.14";
    static final String OID_SUBJECT_ALT_NAME = "2.5.29.17";
    public static final String OID_RSA = "1.2.840.113549.1.1.1";
    public static final String OID_EC = "1.2.840.10045.2.1";
    public static final String OID_ED25519 = "1.3.101.112";

    private static final Pattern PEM_BEGIN = Pattern.compile("-----BEGIN ([^\\r\\n-]*)-----");

    /** Go's pkix.Name: the attribute types Go keeps, each in encoding order. */
    public record Name(List<String> country, List<String> province, List<String> locality,
            List<String> streetAddress, List<String> postalCode, List<String> organization,
            List<String> organizationalUnit, String commonName, String serialNumber) {
    }

    private final byte[] rawTbs;
    private final byte[] rawSubjectPublicKeyInfo;
    private final String signatureAlgorithm;
    private final Der.Value signatureParameters;
    private final byte[] signature;
    private final String publicKeyAlgorithm;
    private final PublicKey publicKey;
    private final Name subject;
    private final List<String> dnsNames = new ArrayList<>();
    private final List<String> emailAddresses = new ArrayList<>();
    private final List<byte[]> ipAddresses = new ArrayList<>();
    private final List<String> uris = new ArrayList<>();

    /** Thrown when a request cannot be read; the message is safe to log and to put in a condition. */
    public static final class ParseException extends Exception {
        public ParseException(String message) {
            super(message, null, false, false);
        }
    }

    /** Upstream's ParseCSR, from {@code spec.request} as the API returns it (base64 of the PEM). */
    public static X509CertificateRequest parseCSRBase64(String request) throws ParseException {
        byte[] pem;
        try {
            pem = Base64.getDecoder().decode(request == null ? "" : request);
        } catch (IllegalArgumentException e) {
            throw new ParseException("PEM block type must be CERTIFICATE REQUEST");
        }
        return parseCSR(pem);
    }

    /** Upstream's ParseCSR: the first PEM block, which must be a CERTIFICATE REQUEST. */
    public static X509CertificateRequest parseCSR(byte[] pemBytes) throws ParseException {
        byte[] der = firstPemBlock(new String(pemBytes, StandardCharsets.ISO_8859_1), "CERTIFICATE REQUEST");
        if (der == null) {
            throw new ParseException("PEM block type must be CERTIFICATE REQUEST");
        }
        try {
            return new X509CertificateRequest(der);
        } catch (IllegalArgumentException | GeneralSecurityException e) {
            throw new ParseException("x509: malformed certificate request: " + e.getMessage());
        }
    }

    /**
     * The DER of the first PEM block of {@code pem} (as Go's pem.Decode: RFC 1421 headers skipped), or null
     * if there is none or it is not of {@code type}.
     */
    public static byte[] firstPemBlock(String pem, String type) {
        Matcher m = PEM_BEGIN.matcher(pem);
        while (m.find()) {
            String end = "-----END " + m.group(1) + "-----";
            int endAt = pem.indexOf(end, m.end());
            if (endAt < 0) {
                continue;
            }
            if (!m.group(1).equals(type)) {
                return null;
            }
            StringBuilder body = new StringBuilder();
            for (String line : pem.substring(m.end(), endAt).split("\\r?\\n")) {
                if (line.indexOf(':') < 0) {
                    body.append(line.strip());
                }
            }
            try {
                return Base64.getDecoder().decode(body.toString());
            } catch (IllegalArgumentException e) {
                continue; // not a valid block: Go's pem.Decode looks for the next one
            }
        }
        return null;
    }

    private X509CertificateRequest(byte[] der) throws GeneralSecurityException {
        Der.Reader outer = Der.decode(der).reader();
        Der.Value tbs = outer.next(Der.SEQUENCE);
        Der.Reader algorithm = outer.next(Der.SEQUENCE).reader();
        signatureAlgorithm = algorithm.next().oid();
        signatureParameters = algorithm.hasNext() ? algorithm.next() : null;
        Der.Value sig = outer.next(Der.BIT_STRING);
        byte[] sigContents = sig.contents();
        if (sigContents.length == 0) {
            throw new IllegalArgumentException("empty signature");
        }
        signature = java.util.Arrays.copyOfRange(sigContents, 1, sigContents.length);
        rawTbs = tbs.encoded();

        Der.Reader info = tbs.reader();
        info.next().integer(); // version
        Der.Value subjectValue = info.next(Der.SEQUENCE);
        Der.Value spki = info.next(Der.SEQUENCE);
        rawSubjectPublicKeyInfo = spki.encoded();
        Der.Reader spkiAlgorithm = spki.reader().next(Der.SEQUENCE).reader();
        publicKeyAlgorithm = spkiAlgorithm.next().oid();
        String keyFactory = switch (publicKeyAlgorithm) {
            case OID_RSA -> "RSA";
            case OID_EC -> "EC";
            case OID_ED25519 -> "Ed25519";
            default -> null;
        };
        publicKey = keyFactory == null ? null
                : KeyFactory.getInstance(keyFactory).generatePublic(new X509EncodedKeySpec(rawSubjectPublicKeyInfo));
        subject = name(subjectValue);
        Der.Value attributes = info.optional(0xa0);
        if (attributes != null) {
            readExtensionRequests(attributes);
        }
    }

    /** Go's FillFromRDNSequence. */
    private static Name name(Der.Value rdns) {
        List<String> c = new ArrayList<>(), st = new ArrayList<>(), l = new ArrayList<>(), street = new ArrayList<>(),
                postal = new ArrayList<>(), o = new ArrayList<>(), ou = new ArrayList<>();
        String cn = "";
        String serial = "";
        Der.Reader r = rdns.reader();
        while (r.hasNext()) {
            Der.Reader atvs = r.next(Der.SET).reader();
            while (atvs.hasNext()) {
                Der.Reader atv = atvs.next(Der.SEQUENCE).reader();
                String type = atv.next().oid();
                Der.Value v = atv.next();
                String value = goString(v);
                if (value == null) {
                    continue;
                }
                switch (type) {
                    case "2.5.4.3" -> cn = value;
                    case "2.5.4.5" -> serial = value;
                    case "2.5.4.6" -> c.add(value);
                    case "2.5.4.7" -> l.add(value);
                    case "2.5.4.8" -> st.add(value);
                    case "2.5.4.9" -> street.add(value);
                    case "2.5.4.10" -> o.add(value);
                    case "2.5.4.11" -> ou.add(value);
                    case "2.5.4.17" -> postal.add(value);
                    default -> {
                    }
                }
            }
        }
        return new Name(List.copyOf(c), List.copyOf(st), List.copyOf(l), List.copyOf(street), List.copyOf(postal),
                List.copyOf(o), List.copyOf(ou), cn, serial);
    }

    /** The ASN.1 string types Go's asn1 reads into a Go string; null for any other value. */
    private static String goString(Der.Value v) {
        return switch (v.tag()) {
            case Der.PRINTABLE_STRING, Der.IA5_STRING, Der.T61_STRING, Der.UTF8_STRING, Der.NUMERIC_STRING,
                    Der.BMP_STRING -> v.string();
            default -> null;
        };
    }

    /** Go's parseCSRExtensions and parseSANExtension: the subjectAltName of the extension requests. */
    private void readExtensionRequests(Der.Value attributes) {
        Der.Reader r = attributes.reader();
        Set<String> requested = new HashSet<>();
        while (r.hasNext()) {
            Der.Value attribute = r.next();
            Der.Reader a;
            String id;
            Der.Value values;
            try {
                a = attribute.reader();
                id = a.next().oid();
                values = a.next(Der.SET);
            } catch (IllegalArgumentException e) {
                continue; // Go ignores attributes that do not parse
            }
            if (!OID_EXTENSION_REQUEST.equals(id) || !values.reader().hasNext()) {
                continue;
            }
            Der.Reader extensions = values.reader().next(Der.SEQUENCE).reader();
            while (extensions.hasNext()) {
                Der.Reader ext = extensions.next(Der.SEQUENCE).reader();
                String extId = ext.next().oid();
                if (!requested.add(extId)) {
                    throw new IllegalArgumentException("x509: certificate request contains duplicate requested extensions");
                }
                ext.optional(Der.BOOLEAN);
                byte[] value = ext.next(Der.OCTET_STRING).octetString();
                if (OID_SUBJECT_ALT_NAME.equals(extId)) {
                    readSubjectAltNames(value);
                }
            }
        }
    }

    private void readSubjectAltNames(byte[] value) {
        dnsNames.clear();
        emailAddresses.clear();
        ipAddresses.clear();
        uris.clear();
        Der.Reader names = Der.decode(value).reader();
        while (names.hasNext()) {
            Der.Value n = names.next();
            switch (n.tag()) {
                case 0x81 -> emailAddresses.add(ia5(n, "rfc822Name"));
                case 0x82 -> dnsNames.add(ia5(n, "dNSName"));
                case 0x86 -> uris.add(ia5(n, "uniformResourceIdentifier"));
                case 0x87 -> {
                    byte[] ip = n.contents();
                    if (ip.length != 4 && ip.length != 16) {
                        throw new IllegalArgumentException("x509: cannot parse IP address of length " + ip.length);
                    }
                    ipAddresses.add(ip);
                }
                default -> {
                }
            }
        }
    }

    private static String ia5(Der.Value v, String what) {
        byte[] b = v.contents();
        for (byte x : b) {
            if ((x & 0x80) != 0) {
                throw new IllegalArgumentException("x509: SAN " + what + " is malformed");
            }
        }
        return new String(b, StandardCharsets.US_ASCII);
    }

    /**
     * Go's CheckSignature for a request (SHA-1 allowed, MD5 not). The message is Go's where it says why
     * (no key material is ever part of it).
     */
    public void checkSignature() throws GeneralSecurityException {
        if (publicKey == null) {
            throw new GeneralSecurityException("x509: cannot verify signature: algorithm unimplemented");
        }
        String key = publicKey.getAlgorithm();
        Signature verifier;
        switch (signatureAlgorithm) {
            case "1.2.840.113549.1.1.5" -> verifier = rsa(key, "SHA1withRSA");
            case "1.2.840.113549.1.1.11" -> verifier = rsa(key, "SHA256withRSA");
            case "1.2.840.113549.1.1.12" -> verifier = rsa(key, "SHA384withRSA");
            case "1.2.840.113549.1.1.13" -> verifier = rsa(key, "SHA512withRSA");
            case "1.2.840.113549.1.1.10" -> {
                verifier = rsa(key, "RSASSA-PSS");
                if (signatureParameters == null) {
                    throw new GeneralSecurityException("x509: cannot verify signature: algorithm unimplemented");
                }
                AlgorithmParameters p = AlgorithmParameters.getInstance("RSASSA-PSS");
                try {
                    p.init(signatureParameters.encoded());
                } catch (java.io.IOException e) {
                    throw new GeneralSecurityException("x509: cannot verify signature: algorithm unimplemented");
                }
                verifier.setParameter(p.getParameterSpec(PSSParameterSpec.class));
            }
            case "1.2.840.10045.4.1" -> verifier = ec(key, "SHA1withECDSA");
            case "1.2.840.10045.4.3.2" -> verifier = ec(key, "SHA256withECDSA");
            case "1.2.840.10045.4.3.3" -> verifier = ec(key, "SHA384withECDSA");
            case "1.2.840.10045.4.3.4" -> verifier = ec(key, "SHA512withECDSA");
            case OID_ED25519 -> {
                if (!"EdDSA".equals(key) && !"Ed25519".equals(key)) {
                    throw mismatch("Ed25519", key);
                }
                verifier = Signature.getInstance("Ed25519");
            }
            case "1.2.840.113549.1.1.4" -> throw new GeneralSecurityException(
                    "x509: cannot verify signature: insecure algorithm MD5-RSA");
            default -> throw new GeneralSecurityException("x509: cannot verify signature: algorithm unimplemented");
        }
        verifier.initVerify(publicKey);
        verifier.update(rawTbs);
        boolean valid;
        try {
            valid = verifier.verify(signature);
        } catch (java.security.SignatureException e) {
            valid = false;
        }
        if (!valid) {
            throw new GeneralSecurityException(switch (key) {
                case "RSA" -> "crypto/rsa: verification error";
                case "EC" -> "x509: ECDSA verification failure";
                default -> "x509: Ed25519 verification failure";
            });
        }
    }

    private static Signature rsa(String key, String algorithm) throws GeneralSecurityException {
        if (!"RSA".equals(key)) {
            throw mismatch("RSA", key);
        }
        return Signature.getInstance(algorithm);
    }

    private static Signature ec(String key, String algorithm) throws GeneralSecurityException {
        if (!"EC".equals(key)) {
            throw mismatch("ECDSA", key);
        }
        return Signature.getInstance(algorithm);
    }

    private static GeneralSecurityException mismatch(String expected, String actual) {
        return new GeneralSecurityException("x509: signature algorithm specifies an " + expected
                + " public key, but have public key of type " + actual);
    }

    public Name subject() {
        return subject;
    }

    public List<String> dnsNames() {
        return dnsNames;
    }

    public List<String> emailAddresses() {
        return emailAddresses;
    }

    /** IP addresses as in the request: 4 or 16 bytes. */
    public List<byte[]> ipAddresses() {
        return ipAddresses;
    }

    public List<String> uris() {
        return uris;
    }

    /** The subjectPublicKeyInfo as the request encodes it. */
    public byte[] rawSubjectPublicKeyInfo() {
        return rawSubjectPublicKeyInfo.clone();
    }

    public String publicKeyAlgorithm() {
        return publicKeyAlgorithm;
    }
}
