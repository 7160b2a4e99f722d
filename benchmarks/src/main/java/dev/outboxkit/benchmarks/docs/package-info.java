/**
 * Keeps the reference pages a manual: figures rendered from (or checked against) the results and evidence they come
 * from ({@link dev.outboxkit.benchmarks.docs.Figures}), and the rules a reference page follows
 * ({@link dev.outboxkit.benchmarks.docs.ReferencePages}). docs/build-readme.sh renders; ReferencePagesTest checks.
 */
package dev.outboxkit.benchmarks.docs;
