package io.qkcm.manager;

import io.qkcm.runtime.options.Flag;
import io.qkcm.runtime.options.Flags;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Parses arguments as spf13/pflag does for kube-controller-manager: {@code --name=value},
 * {@code --name value}, bare {@code --bool}, {@code -v 2} shorthands, underscores read as dashes, and
 * repeated slice flags appending. Errors are one line naming the offending argument.
 */
public final class FlagParser {

    /** The parsed command line: flags given (raw values) and the special requests. */
    public record Result(Map<String, String> values, boolean help, boolean version, String versionValue) {
    }

    public static final class FlagError extends Exception {
        public FlagError(String message) {
            super(message);
        }
    }

    private final Flags flags;

    public FlagParser(Flags flags) {
        this.flags = flags;
    }

    public Result parse(List<String> args) throws FlagError {
        Map<String, String> values = new LinkedHashMap<>();
        boolean help = false;
        boolean version = false;
        String versionValue = null;
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals("--")) {
                if (i + 1 < args.size()) {
                    throw new FlagError("\"kube-controller-manager\" does not take any arguments, got "
                            + quoteList(args.subList(i + 1, args.size())));
                }
                break;
            }
            if (!arg.startsWith("-") || arg.equals("-")) {
                throw new FlagError("\"kube-controller-manager\" does not take any arguments, got "
                        + quoteList(args.subList(i, args.size())));
            }
            boolean longForm = arg.startsWith("--");
            String body = arg.substring(longForm ? 2 : 1);
            String name = body;
            String value = null;
            int eq = body.indexOf('=');
            if (eq >= 0) {
                name = body.substring(0, eq);
                value = body.substring(eq + 1);
            }
            name = name.replace('_', '-');
            Optional<Flag> flag = longForm ? flags.byName(name) : flags.byShorthand(name);
            if (longForm && (name.equals("help")) || !longForm && name.equals("h")) {
                help = true;
                continue;
            }
            if (longForm && name.equals("version")) {
                // upstream's --version is a tri-state: true, false, raw
                version = value == null || !value.equals("false");
                versionValue = value;
                continue;
            }
            if (flag.isEmpty()) {
                throw new FlagError("unknown " + (longForm ? "flag: --" : "shorthand flag: '") + name
                        + (longForm ? "" : "' in " + arg));
            }
            Flag f = flag.get();
            if (value == null) {
                if (f.isBool()) {
                    value = "true";
                } else if (i + 1 < args.size()) {
                    value = args.get(++i);
                } else {
                    throw new FlagError("flag needs an argument: " + arg);
                }
            }
            String error = f.validate(value);
            if (error != null) {
                throw new FlagError("invalid argument \"" + value + "\" for \"--" + f.name() + "\" flag: " + error);
            }
            if (f.isRepeatable()) {
                values.merge(f.name(), value, (a, b) -> a + "," + b);
            } else {
                values.put(f.name(), value);
            }
        }
        return new Result(values, help, version, versionValue);
    }

    private static String quoteList(List<String> args) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < args.size(); i++) {
            sb.append(i == 0 ? "" : " ").append(args.get(i));
        }
        return sb.append("]").toString();
    }
}
