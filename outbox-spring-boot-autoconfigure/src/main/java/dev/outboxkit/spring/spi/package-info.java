/** Not API: what outbox-spring-boot-test uses of the auto-configuration (the writes it records). May change in any release. */
package dev.outboxkit.spring.spi;
