package io.qkcm.controller;

import io.qkcm.runtime.josdk.ControllerContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.Base64;

import io.fabric8.kubernetes.client.Config;

/**
 * The API server CA bundle that root-ca-certificate-publisher-controller and
 * serviceaccount-token-controller hand out, as upstream: {@code --root-ca-file} (which must hold PEM
 * certificates) when set, else the CA data of the controller manager's own API client configuration.
 */
public final class RootCA {

    private RootCA() {
    }

    public static byte[] load(ControllerContext context) {
        String file = context.options().string("root-ca-file");
        if (!file.isEmpty()) {
            try {
                return readCA(Path.of(file));
            } catch (IOException | CertificateException e) {
                throw new IllegalArgumentException("error parsing root-ca-file at " + file + ": " + e.getMessage(), e);
            }
        }
        Config config = context.client().getConfiguration();
        try {
            if (config.getCaCertData() != null && !config.getCaCertData().isEmpty()) {
                return Base64.getMimeDecoder().decode(config.getCaCertData());
            }
            if (config.getCaCertFile() != null && !config.getCaCertFile().isEmpty()) {
                return Files.readAllBytes(Path.of(config.getCaCertFile()));
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot read the API client's CA data: " + e.getMessage(), e);
        }
        return new byte[0];
    }

    /** Upstream's readCA: the file's bytes, provided they parse as PEM certificates. */
    static byte[] readCA(Path file) throws IOException, CertificateException {
        byte[] data = Files.readAllBytes(file);
        String pem = new String(data, StandardCharsets.US_ASCII);
        if (!pem.contains("-----BEGIN CERTIFICATE-----")) {
            throw new CertificateException("data does not contain any valid RSA or ECDSA certificates");
        }
        if (CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(data)).isEmpty()) {
            throw new CertificateException("data does not contain any valid RSA or ECDSA certificates");
        }
        return data;
    }
}
