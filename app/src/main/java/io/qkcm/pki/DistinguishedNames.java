package io.qkcm.pki;

import java.util.ArrayList;
import java.util.List;

import javax.security.auth.x500.X500Principal;

/**
 * Reads the attributes of an X.509 distinguished name from its DER encoding, without BouncyCastle (see
 * {@link Der} for why). Decoding the DER rather than parsing {@link X500Principal#getName()} keeps values
 * that contain commas, plus signs, quotes or escapes intact.
 */
public final class DistinguishedNames {

    public static final String COMMON_NAME = "2.5.4.3";
    public static final String ORGANIZATION = "2.5.4.10";

    /** One AttributeTypeAndValue: the type's dotted OID and the value as a string. */
    public record Attribute(String oid, String value) {
    }

    private DistinguishedNames() {
    }

    public static List<Attribute> attributes(X500Principal name) {
        return attributes(name.getEncoded());
    }

    /**
     * Every attribute of every RDN, in encoding order (the issuer's order, most significant RDN first;
     * {@code getName()} prints them reversed). String values are decoded (UTF8String, PrintableString,
     * IA5String, T61String, BMPString, ...); any other value is given as {@code #} and the hex of its DER
     * encoding, as RFC 4514 (and BouncyCastle's IETFUtils) does.
     *
     * @throws IllegalArgumentException if {@code der} is not a DER-encoded Name
     */
    public static List<Attribute> attributes(byte[] der) {
        List<Attribute> out = new ArrayList<>();
        Der.Value name = Der.decode(der);
        if (name.tag() != Der.SEQUENCE) {
            throw new IllegalArgumentException("not a DER-encoded Name");
        }
        Der.Reader rdns = name.reader(); // Name ::= SEQUENCE OF RelativeDistinguishedName
        while (rdns.hasNext()) {
            Der.Reader atvs = rdns.next(Der.SET).reader(); // RDN ::= SET OF AttributeTypeAndValue
            while (atvs.hasNext()) {
                Der.Reader atv = atvs.next(Der.SEQUENCE).reader();
                String oid = atv.next().oid();
                Der.Value value = atv.next();
                if (atv.hasNext()) {
                    throw new IllegalArgumentException("trailing data in AttributeTypeAndValue");
                }
                out.add(new Attribute(oid, value.isString() ? value.string() : "#" + Der.hex(value.encoded())));
            }
        }
        return out;
    }

    /** The values of the attributes of type {@code oid}, in encoding order. */
    public static List<String> values(List<Attribute> attributes, String oid) {
        List<String> out = new ArrayList<>();
        for (Attribute a : attributes) {
            if (a.oid().equals(oid)) {
                out.add(a.value());
            }
        }
        return out;
    }
}
