package io.qkcm.controller.volume.selinuxwarning;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.fabric8.kubernetes.api.model.SELinuxOptions;

/**
 * Upstream's ControllerSELinuxTranslator (selinuxwarning/translator): SELinux is taken as enabled, a label is
 * {@code user:role:type:level} as the pod wrote it (no defaults filled in), and two labels conflict when a
 * part set in both differs, or their levels differ at all (an empty level is a level too).
 */
final class SELinuxTranslator {

    private SELinuxTranslator() {
    }

    static String toFileLabel(SELinuxOptions opts) {
        if (opts == null) {
            return "";
        }
        String label = String.join(":", nz(opts.getUser()), nz(opts.getRole()), nz(opts.getType()), nz(opts.getLevel()));
        return ":::".equals(label) ? "" : label;
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }

    static boolean conflicts(String labelA, String labelB) {
        List<String> partsA = new ArrayList<>(Arrays.asList(labelA.split(":", 4)));
        List<String> partsB = new ArrayList<>(Arrays.asList(labelB.split(":", 4)));
        if (partsA.size() < partsB.size()) {
            List<String> t = partsA;
            partsA = partsB;
            partsB = t;
        }
        while (partsB.size() < partsA.size()) {
            partsB.add("");
        }
        for (int i = 0; i < partsA.size(); i++) {
            if (partsA.get(i).equals(partsB.get(i))) {
                continue;
            }
            if (i == 3) {
                return true;
            }
            if (partsA.get(i).isEmpty() || partsB.get(i).isEmpty()) {
                continue;
            }
            return true;
        }
        return false;
    }
}
