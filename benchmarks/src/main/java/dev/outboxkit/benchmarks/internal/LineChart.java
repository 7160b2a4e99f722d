package dev.outboxkit.benchmarks.internal;

import static dev.outboxkit.benchmarks.internal.BarChart.BOTTOM;
import static dev.outboxkit.benchmarks.internal.BarChart.LEFT;
import static dev.outboxkit.benchmarks.internal.BarChart.PLOT_HEIGHT;
import static dev.outboxkit.benchmarks.internal.BarChart.RIGHT;
import static dev.outboxkit.benchmarks.internal.BarChart.TOP;

import dev.outboxkit.benchmarks.Numbers;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.util.List;

/**
 * A line chart drawn with Java2D in {@link BarChart}'s layout and colours: one line per series over a linear x and y
 * axis from 0. Enough for a value over time (the backlog mode's resident memory).
 */
public final class LineChart {

    /** One line: its name in the legend and its points ({@code {x, y}}), in x order. */
    public record Line(String name, List<double[]> points) {
    }

    private static final int WIDTH = 640;

    private final String title;
    private final String xUnit;
    private final String yUnit;

    public LineChart(String title, String xUnit, String yUnit) {
        this.title = title;
        this.xUnit = xUnit;
        this.yUnit = yUnit;
    }

    public BufferedImage render(List<Line> lines) {
        int plotWidth = WIDTH - LEFT - RIGHT;
        double xMax = 1;
        double yMax = 1;
        for (Line line : lines) {
            for (double[] p : line.points()) {
                xMax = Math.max(xMax, p[0]);
                yMax = Math.max(yMax, p[1]);
            }
        }
        double xStep = BarChart.niceStep(xMax / 6);
        double yStep = BarChart.niceStep(yMax * 1.15 / 5);
        double xTop = Math.ceil(xMax / xStep) * xStep;
        double yTop = Math.ceil(yMax * 1.15 / yStep) * yStep;
        BufferedImage image = new BufferedImage(WIDTH, TOP + PLOT_HEIGHT + BOTTOM, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = BarChart.begin(image, title);
        try {
            BarChart.drawLegend(g, lines.stream().map(Line::name).toList());
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            FontMetrics fm = g.getFontMetrics();
            for (double t = 0; t <= yTop + yStep / 2; t += yStep) {
                BarChart.gridLine(g, TOP + PLOT_HEIGHT - (int) Math.round(t / yTop * PLOT_HEIGHT), WIDTH,
                        Numbers.format(t));
            }
            for (double t = 0; t <= xTop + xStep / 2; t += xStep) {
                String label = Numbers.format(t);
                g.drawString(label, LEFT + (int) Math.round(t / xTop * plotWidth) - fm.stringWidth(label) / 2,
                        TOP + PLOT_HEIGHT + 16);
            }
            g.setColor(Color.BLACK);
            g.drawLine(LEFT, TOP, LEFT, TOP + PLOT_HEIGHT);
            g.drawLine(LEFT, TOP + PLOT_HEIGHT, WIDTH - RIGHT, TOP + PLOT_HEIGHT);
            g.drawString(yUnit, 8, TOP - 10);
            g.drawString(xUnit, WIDTH - RIGHT - fm.stringWidth(xUnit), TOP + PLOT_HEIGHT + 34);
            g.setStroke(new BasicStroke(2f));
            for (int i = 0; i < lines.size(); i++) {
                g.setColor(BarChart.colour(i));
                int[] previous = null;
                for (double[] p : lines.get(i).points()) {
                    int[] xy = {LEFT + (int) Math.round(p[0] / xTop * plotWidth),
                        TOP + PLOT_HEIGHT - (int) Math.round(p[1] / yTop * PLOT_HEIGHT)};
                    if (previous != null) {
                        g.drawLine(previous[0], previous[1], xy[0], xy[1]);
                    }
                    previous = xy;
                }
            }
            if (lines.isEmpty()) {
                g.setColor(Color.GRAY);
                g.drawString("nothing measured yet", LEFT + 20, TOP + PLOT_HEIGHT / 2);
            }
        } finally {
            g.dispose();
        }
        return image;
    }
}
