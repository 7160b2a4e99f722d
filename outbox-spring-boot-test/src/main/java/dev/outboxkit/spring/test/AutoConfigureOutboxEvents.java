package dev.outboxkit.spring.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * On a {@code @SpringBootTest} class: records the outbox events the application writes in an
 * {@link OutboxEvents} bean to inject, cleared before each test method. Needs the writer in its
 * default mode {@code keep} (the recorder reads the rows back in the writing transaction).
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ImportAutoConfiguration
public @interface AutoConfigureOutboxEvents {
}
