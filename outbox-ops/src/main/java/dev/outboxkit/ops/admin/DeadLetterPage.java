package dev.outboxkit.ops.admin;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * One page of dead letters, oldest parked first (then by {@code seq} and id).
 *
 * @param items the rows of this page
 * @param next  where the next page starts ({@link OutboxAdmin#deadLetters(DeadLetterFilter, int, Cursor)});
 *              null when this is the last page
 */
public record DeadLetterPage(List<DeadLetter> items, Cursor next) {

    public DeadLetterPage {
        items = List.copyOf(items);
    }

    /** Whether more rows follow this page. */
    public boolean hasMore() {
        return next != null;
    }

    /**
     * The position after a row, in the list's order. Keyset paging: rows parked, retried or discarded meanwhile
     * neither shift nor repeat the pages that follow. A caller may keep it (for example in a URL) as its three parts.
     */
    public record Cursor(Instant parkedAt, long seq, UUID id) {
        public Cursor {
            if (parkedAt == null || id == null) {
                throw new IllegalArgumentException("a cursor needs parkedAt and id, got " + parkedAt + " and " + id);
            }
        }

        /** The position just after {@code row}. */
        public static Cursor after(DeadLetter row) {
            return new Cursor(row.parkedAt(), row.seq(), row.id());
        }
    }
}
