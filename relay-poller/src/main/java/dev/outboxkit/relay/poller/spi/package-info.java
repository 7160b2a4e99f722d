/** Not API: what the benchmarks use of the polling relay (the slice indexes). */
package dev.outboxkit.relay.poller.spi;
