/**
 * Reporting: {@link io.kvroute.bench.report.Report#write} turns variant results into results.json, the
 * {@code --json} summary ({@link io.kvroute.bench.report.ReportJson}), report.md
 * ({@link io.kvroute.bench.report.MarkdownReport}) and PNG plots ({@link io.kvroute.bench.report.Charts});
 * {@link io.kvroute.bench.report.Progress} shows progress on a terminal or as plain lines.
 */
package io.kvroute.bench.report;
