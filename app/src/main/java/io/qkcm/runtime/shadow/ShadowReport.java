package io.qkcm.runtime.shadow;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;

import io.qkcm.runtime.Json;

/** The {@code /shadow} report: counts by controller and class, the latest mismatches with their diffs. */
public final class ShadowReport {

    private ShadowReport() {
    }

    public static Map<String, Object> model(ShadowMatcher matcher) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("windowSeconds", matcher.window().toMillis() / 1000.0);
        out.put("intendedWrites", matcher.intended());
        Map<String, Long> classes = new LinkedHashMap<>();
        for (String c : ShadowMatcher.CLASSES) {
            classes.put(c, matcher.total(c));
        }
        out.put("totals", classes);
        out.put("controllers", matcher.totals());
        out.put("open", matcher.openKeys().size());
        List<Map<String, Object>> latest = matcher.latest().stream().map(m -> {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("time", m.time().toString());
            e.put("controller", m.controller());
            e.put("class", m.cls());
            e.put("action", m.key());
            e.put("qkcm", m.qkcmActions());
            e.put("upstream", m.upstreamActions());
            e.put("diff", m.diff());
            return e;
        }).toList();
        out.put("latestMismatches", latest);
        return out;
    }

    public static String json(ShadowMatcher matcher) {
        try {
            return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(model(matcher)) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unchecked")
    public static String html(ShadowMatcher matcher) {
        Map<String, Object> model = model(matcher);
        StringBuilder b = new StringBuilder();
        b.append("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>qkcm shadow report</title>")
                .append("<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}")
                .append("td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}")
                .append(".bad{color:#a00}pre{margin:0;white-space:pre-wrap}</style></head><body>")
                .append("<h1>qkcm shadow mode</h1><p>Writes qkcm intended (dry runs): ").append(model.get("intendedWrites"))
                .append(". Matching window: ").append(model.get("windowSeconds")).append(" s. Groups still open: ")
                .append(model.get("open")).append(".</p><h2>By controller</h2><table><tr><th>controller</th>");
        for (String c : ShadowMatcher.CLASSES) {
            b.append("<th>").append(c).append("</th>");
        }
        b.append("</tr>");
        ((Map<String, Map<String, Long>>) model.get("controllers")).forEach((controller, counts) -> {
            b.append("<tr><td>").append(escape(controller)).append("</td>");
            for (String c : ShadowMatcher.CLASSES) {
                long n = counts.getOrDefault(c, 0L);
                b.append("<td").append(n > 0 && ShadowMatcher.isMismatch(c) ? " class=\"bad\"" : "").append('>')
                        .append(n).append("</td>");
            }
            b.append("</tr>");
        });
        b.append("</table><h2>Latest mismatches</h2>");
        List<Map<String, Object>> latest = (List<Map<String, Object>>) model.get("latestMismatches");
        if (latest.isEmpty()) {
            b.append("<p>None.</p>");
        } else {
            b.append("<table><tr><th>time</th><th>controller</th><th>class</th><th>action</th><th>qkcm</th><th>upstream</th><th>diff</th></tr>");
            for (Map<String, Object> m : latest) {
                b.append("<tr><td>").append(escape(m.get("time"))).append("</td><td>").append(escape(m.get("controller")))
                        .append("</td><td class=\"bad\">").append(escape(m.get("class"))).append("</td><td>")
                        .append(escape(m.get("action"))).append("</td><td>").append(m.get("qkcm")).append("</td><td>")
                        .append(m.get("upstream")).append("</td><td><pre>")
                        .append(escape(String.join("\n", (List<String>) m.get("diff")))).append("</pre></td></tr>");
            }
            b.append("</table>");
        }
        return b.append("</body></html>\n").toString();
    }

    private static String escape(Object o) {
        return String.valueOf(o).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
