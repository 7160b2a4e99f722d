package dev.outboxkit.ops.reconcile;

import dev.outboxkit.core.Identifiers;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Where a consumer's effects live: its database, the schema holding {@code processed_event} and
 * {@code external_effect}, and the consumer groups to check there.
 *
 * @param name       a label for reports (for example the service name)
 * @param dataSource the consumer's database (may be the outbox database)
 * @param schema     validated identifier
 * @param groups     consumer groups (values of {@code processed_event.consumer_group}); at least one
 * @param aggregateTypes the aggregate types these groups consume (intents of other types are not
 *                   expected to have an effect here); empty means every type
 */
public record ConsumerSource(String name, DataSource dataSource, String schema, List<String> groups,
                             Set<String> aggregateTypes) {

    /** A source whose groups consume every aggregate type. */
    public ConsumerSource(String name, DataSource dataSource, String schema, List<String> groups) {
        this(name, dataSource, schema, groups, Set.of());
    }

    public ConsumerSource {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("consumer name must not be blank");
        }
        Objects.requireNonNull(dataSource, "dataSource");
        Identifiers.requireValid("schema", schema);
        if (groups == null || groups.isEmpty() || groups.stream().anyMatch(g -> g == null || g.isBlank())) {
            throw new IllegalArgumentException("consumer " + name + " needs at least one non-blank group, got " + groups);
        }
        groups = List.copyOf(groups);
        aggregateTypes = aggregateTypes == null ? Set.of() : Set.copyOf(aggregateTypes);
    }
}
