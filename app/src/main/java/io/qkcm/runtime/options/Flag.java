package io.qkcm.runtime.options;

/**
 * A kube-controller-manager command-line flag: upstream's name, shorthand, value type and default
 * (from upstream v1.34's flag set), and whether qkcm acts on it. A flag qkcm accepts only for
 * compatibility says so in {@code --help}. Every flag is also the config property {@code qkcm.<name>}.
 */
public record Flag(String section, String name, String shorthand, String type, String defaultValue, String usage,
        boolean implemented) {

    public static final String CONFIG_PREFIX = "qkcm.";

    public boolean isBool() {
        return type.equals("bool");
    }

    /** Repeating the flag appends, as pflag's slice and map values do. */
    public boolean isRepeatable() {
        return switch (type) {
            case "strings", "colonSeparatedMultimapStringString", "stringToString", "namedCertKey", "pattern=N,..." -> true;
            default -> false;
        };
    }

    public String configProperty() {
        return CONFIG_PREFIX + name;
    }

    /** Checks that {@code value} parses as this flag's type; returns an error message or null. */
    public String validate(String value) {
        try {
            switch (type) {
                case "bool" -> {
                    if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false") && !value.equals("1")
                            && !value.equals("0") && !value.equals("t") && !value.equals("f")
                            && !value.equals("T") && !value.equals("F")) {
                        return "strconv.ParseBool: parsing \"" + value + "\": invalid syntax";
                    }
                }
                case "int", "int32", "int64", "uint16", "uint32", "Level" -> Long.parseLong(value.trim());
                case "float", "float32", "float64" -> {
                    double d = Double.parseDouble(value.trim());
                    if (Double.isNaN(d)) {
                        return "invalid float";
                    }
                }
                case "duration" -> GoDuration.parse(value);
                case "colonSeparatedMultimapStringString" -> FeatureGates.parseAssignments(value);
                default -> {
                    // strings, string slices, IPs and enumerations are checked where they are used
                }
            }
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage() == null ? "invalid value" : e.getMessage();
        }
    }
}
