import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;

/**
 * The first EC key generation and signature of a fresh JVM, per curve: what the serving certificate's
 * generation costs a start (ServingCertificate). Run each curve in its own JVM, with qkcm's JIT options:
 *
 *   javac -d /tmp bench/startup/KeyGen.java
 *   for c in secp256r1 secp384r1; do java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp /tmp KeyGen $c; done
 */
public class KeyGen {
    public static void main(String[] args) throws Exception {
        String curve = args[0];
        long t0 = System.nanoTime();
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec(curve), new SecureRandom());
        KeyPair keys = generator.generateKeyPair();
        long t1 = System.nanoTime();
        Signature signer = Signature.getInstance(curve.equals("secp384r1") ? "SHA384withECDSA" : "SHA256withECDSA");
        signer.initSign(keys.getPrivate());
        signer.update(new byte[500]);
        signer.sign();
        long t2 = System.nanoTime();
        System.out.printf("%s: key %.1f ms, signature %.1f ms%n", curve, (t1 - t0) / 1e6, (t2 - t1) / 1e6);
    }
}
