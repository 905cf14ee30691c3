/**
 * Engine-side load-report publisher: SGLang-compatible {@code LoadStat} frames over ZeroMQ PUB.
 *
 * <p>Start reading at {@link io.kvroute.scheduler.report.LoadPublisher} (sockets, threading) and
 * {@code PublishSchedule} (when a stat is sent). The wire format is specified byte by byte in
 * {@code docs/load-report-protocol.md}; {@code io.kvroute.protocol.LoadStatWire} (the kvroute-protocol module) implements it and the golden
 * vectors under {@code src/test/resources/load-vectors} pin it.
 */
package io.kvroute.scheduler.report;

