/**
 * Fault injection for tests: a TCP proxy that cuts, stalls or blackholes a connection
 * ({@link dev.outboxkit.testkit.fault.TcpFaultProxy}) and schedules of faults
 * ({@link dev.outboxkit.testkit.fault.FaultSchedule}).
 */
package dev.outboxkit.testkit.fault;
