// CPU cost per byte of TLS 1.3 record ciphers in this JVM (bench/cipher/run.sh).
import javax.crypto.Cipher;
import javax.crypto.spec.*;
import java.lang.management.ManagementFactory;
import java.security.SecureRandom;

public class CipherCost {
    public static void main(String[] a) throws Exception {
        int size = a.length > 0 ? Integer.parseInt(a[0]) : 16384;
        byte[] buf = new byte[size];
        new SecureRandom().nextBytes(buf);
        byte[] key = new byte[32];
        var tb = ManagementFactory.getThreadMXBean();
        for (String name : new String[] {"AES/GCM/NoPadding", "ChaCha20-Poly1305", "AES/GCM/NoPadding", "ChaCha20-Poly1305"}) {
            int n = (int) (48L * 1024 * 1024 / size); // 48 MiB in records of that size
            long t0 = tb.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                byte[] nonce = new byte[12];
                nonce[0] = (byte) i; nonce[1] = (byte) (i >> 8);
                Cipher c = Cipher.getInstance(name);
                if (name.startsWith("AES")) {
                    c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, 0, 16, "AES"), new GCMParameterSpec(128, nonce));
                } else {
                    c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "ChaCha20"), new IvParameterSpec(nonce));
                }
                c.doFinal(buf);
            }
            double s = (tb.getCurrentThreadCpuTime() - t0) / 1e9;
            System.out.printf("%-20s %6d B records: %6.1f MB/s, %5.2f us/record%n", name, size, (double) n * size / 1e6 / s, s * 1e6 / n);
        }
    }
}
