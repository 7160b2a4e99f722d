/** Not API: what the benchmarks use of the CDC relay (Debezium alone, as the relay configures it). */
package dev.outboxkit.relay.cdc.spi;
