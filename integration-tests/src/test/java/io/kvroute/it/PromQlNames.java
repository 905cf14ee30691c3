package io.kvroute.it;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Pulls the metric names (and the label names each selector matches on) out of a PromQL
 * expression, for checking a dashboard against a live {@code /metrics} scrape.
 *
 * <p>A small lexer, not a parser: strings, durations in {@code [...]} and Grafana variables are
 * skipped; an identifier followed by {@code (} is a function or aggregation; the parenthesized list
 * after {@code by}, {@code without}, {@code on}, {@code ignoring}, {@code group_left} and
 * {@code group_right} holds label names; the braces after a name hold its matchers. Every other
 * identifier is a metric name, kept verbatim (so {@code _bucket}, {@code _count} and {@code _sum}
 * must appear in the scrape exactly as written, as Prometheus stores them).
 */
final class PromQlNames {

    /** One vector selector: the metric name and the label names its matchers use. */
    record Selector(String metric, Set<String> labels) {}

    private static final Set<String> LABEL_LIST_KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left",
            "group_right");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "inf", "nan", "atan2");
    /** Aggregation operators: may be followed by a by/without clause before their parenthesis. */
    private static final Set<String> AGGREGATIONS = Set.of("sum", "min", "max", "avg", "group", "stddev", "stdvar",
            "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio");

    private PromQlNames() {}

    static List<Selector> selectors(String expr) {
        List<Selector> out = new ArrayList<>();
        int i = 0;
        int n = expr.length();
        while (i < n) {
            char c = expr.charAt(i);
            if (c == '"' || c == '\'' || c == '`') {
                i = skipString(expr, i);
            } else if (c == '[') {
                i = expr.indexOf(']', i) + 1;
            } else if (c == '$') {
                i = skipIdentifier(expr, i + 1);
            } else if (Character.isDigit(c) || (c == '.' && i + 1 < n && Character.isDigit(expr.charAt(i + 1)))) {
                while (i < n && (Character.isLetterOrDigit(expr.charAt(i)) || expr.charAt(i) == '.')) {
                    i++; // numbers and durations like 5m
                }
            } else if (c == '{') {
                // a selector without a leading name ({__name__="..."}): not used by our dashboards
                throw new IllegalArgumentException("bare selector without a metric name in: " + expr);
            } else if (isIdentifierStart(c)) {
                int end = skipIdentifier(expr, i);
                String word = expr.substring(i, end);
                int next = skipSpaces(expr, end);
                String lower = word.toLowerCase(java.util.Locale.ROOT);
                if (LABEL_LIST_KEYWORDS.contains(lower)) {
                    i = next < n && expr.charAt(next) == '(' ? expr.indexOf(')', next) + 1 : next;
                } else if (KEYWORDS.contains(lower) || AGGREGATIONS.contains(lower) || (next < n && expr.charAt(next) == '(')) {
                    i = end; // operator or function/aggregation name
                } else {
                    Set<String> labels = new LinkedHashSet<>();
                    i = end;
                    if (next < n && expr.charAt(next) == '{') {
                        i = matchers(expr, next, labels);
                    }
                    out.add(new Selector(word, labels));
                }
            } else {
                i++;
            }
        }
        return out;
    }

    /** Reads {@code {a="x", b=~"y"}} starting at the brace; returns the index after the closing brace. */
    private static int matchers(String expr, int open, Set<String> labels) {
        int i = open + 1;
        while (i < expr.length()) {
            i = skipSpaces(expr, i);
            char c = expr.charAt(i);
            if (c == '}') {
                return i + 1;
            }
            if (c == ',') {
                i++;
                continue;
            }
            if (c == '"' || c == '\'' || c == '`') {
                i = skipString(expr, i);
                continue;
            }
            if (isIdentifierStart(c)) {
                int end = skipIdentifier(expr, i);
                labels.add(expr.substring(i, end));
                i = end;
                continue;
            }
            i++; // = != =~ !~
        }
        throw new IllegalArgumentException("unclosed selector in: " + expr);
    }

    private static int skipString(String s, int i) {
        char quote = s.charAt(i);
        for (int j = i + 1; j < s.length(); j++) {
            if (s.charAt(j) == '\\' && quote != '`') {
                j++;
            } else if (s.charAt(j) == quote) {
                return j + 1;
            }
        }
        throw new IllegalArgumentException("unclosed string in: " + s);
    }

    private static boolean isIdentifierStart(char c) {
        return Character.isLetter(c) || c == '_' || c == ':';
    }

    private static int skipIdentifier(String s, int i) {
        while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_' || s.charAt(i) == ':')) {
            i++;
        }
        return i;
    }

    private static int skipSpaces(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }
}
