package io.tcpx4j.cli;

/**
 * How the bench prints its rows on stdout as they finish: a head before the first row, one line per
 * row, a tail after the last. Each piece is whole lines, each ending with a newline.
 *
 * <p>Implementations are immutable.
 */
interface RowFormat {

    /** The column titles (and a rule, where the format has one). */
    String head();

    /** One row. */
    String line(BenchRow row);

    /** What follows the last row. */
    String tail();

    /** The head, every row, the tail. */
    default String render(java.util.List<BenchRow> rows) {
        StringBuilder b = new StringBuilder(head());
        for (BenchRow r : rows) {
            b.append(line(r));
        }
        return b.append(tail()).toString();
    }
}
