package dev.outboxkit.benchmarks.load;

/**
 * A rate with and without some extra work, measured on the same database in the order without, with, with, without,
 * each leg half a window: the two means see the same warm-up, the same database state and the same drift of the
 * machine, so their ratio is the price of the extra work alone. Measured on separate databases, one after the other,
 * the two rates also differ by whatever changed in between (a checkpoint, another tenant of the machine).
 *
 * @param without the mean rate of the two legs without the extra work
 * @param with    the mean rate of the two legs with it
 */
public record BackToBack(double without, double with) {

    /** One leg: runs the workload for half a window and returns its rate. */
    @FunctionalInterface
    public interface Leg {
        double perSecond() throws Exception;
    }

    /** Runs {@code without}, {@code with}, {@code with}, {@code without}. */
    public static BackToBack measure(Leg without, Leg with) throws Exception {
        double a = without.perSecond();
        double b = with.perSecond();
        b = (b + with.perSecond()) / 2;
        a = (a + without.perSecond()) / 2;
        return new BackToBack(a, b);
    }

    /** with ÷ without (1 = free). */
    public double ratio() {
        return with / without;
    }
}
