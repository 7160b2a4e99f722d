package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.Numbers;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.util.List;

/**
 * A line chart drawn with Java2D, beside {@link BarChart} and in its colours: one line per series over a linear x and
 * y axis from 0. Enough for a value over time (the backlog mode's resident memory).
 */
public final class LineChart {

    /** One line: its name in the legend and its points, in x order. */
    public record Line(String name, List<double[]> points) {
    }

    private static final int WIDTH = 640;
    private static final int LEFT = 84;
    private static final int RIGHT = 24;
    private static final int TOP = 70;
    private static final int BOTTOM = 70;
    private static final int PLOT_HEIGHT = 300;

    private final String title;
    private final String xUnit;
    private final String yUnit;

    public LineChart(String title, String xUnit, String yUnit) {
        this.title = title;
        this.xUnit = xUnit;
        this.yUnit = yUnit;
    }

    public BufferedImage render(List<Line> lines) {
        int height = TOP + PLOT_HEIGHT + BOTTOM;
        int plotWidth = WIDTH - LEFT - RIGHT;
        double xMax = 0;
        double yMax = 0;
        for (Line line : lines) {
            for (double[] p : line.points()) {
                xMax = Math.max(xMax, p[0]);
                yMax = Math.max(yMax, p[1]);
            }
        }
        double xStep = BarChart.niceStep(Math.max(xMax, 1) / 6);
        double yStep = BarChart.niceStep(Math.max(yMax, 1) * 1.15 / 5);
        double xTop = Math.ceil(Math.max(xMax, 1) / xStep) * xStep;
        double yTop = Math.ceil(Math.max(yMax, 1) * 1.15 / yStep) * yStep;
        BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
            g.drawString(title, LEFT, 24);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            FontMetrics fm = g.getFontMetrics();
            for (double t = 0; t <= yTop + yStep / 2; t += yStep) {
                int y = TOP + PLOT_HEIGHT - (int) Math.round(t / yTop * PLOT_HEIGHT);
                g.setColor(new Color(0xE6E6E6));
                g.drawLine(LEFT, y, WIDTH - RIGHT, y);
                g.setColor(Color.DARK_GRAY);
                String label = Numbers.format(t);
                g.drawString(label, LEFT - 6 - fm.stringWidth(label), y + fm.getAscent() / 2 - 1);
            }
            for (double t = 0; t <= xTop + xStep / 2; t += xStep) {
                int x = LEFT + (int) Math.round(t / xTop * plotWidth);
                String label = Numbers.format(t);
                g.drawString(label, x - fm.stringWidth(label) / 2, TOP + PLOT_HEIGHT + 16);
            }
            g.setColor(Color.BLACK);
            g.drawLine(LEFT, TOP, LEFT, TOP + PLOT_HEIGHT);
            g.drawLine(LEFT, TOP + PLOT_HEIGHT, WIDTH - RIGHT, TOP + PLOT_HEIGHT);
            g.drawString(yUnit, 8, TOP - 10);
            g.drawString(xUnit, WIDTH - RIGHT - fm.stringWidth(xUnit), TOP + PLOT_HEIGHT + 34);
            int legendX = LEFT;
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            for (int i = 0; i < lines.size(); i++) {
                Line line = lines.get(i);
                Color colour = BarChart.colour(i);
                g.setColor(colour);
                g.fillRect(legendX, 36, 12, 12);
                g.setColor(Color.BLACK);
                g.drawString(line.name(), legendX + 16, 46);
                legendX += 16 + g.getFontMetrics().stringWidth(line.name()) + 18;
                g.setColor(colour);
                g.setStroke(new BasicStroke(2f));
                int[] previous = null;
                for (double[] p : line.points()) {
                    int[] xy = {LEFT + (int) Math.round(p[0] / xTop * plotWidth),
                        TOP + PLOT_HEIGHT - (int) Math.round(p[1] / yTop * PLOT_HEIGHT)};
                    if (previous != null) {
                        g.drawLine(previous[0], previous[1], xy[0], xy[1]);
                    }
                    previous = xy;
                }
                g.setStroke(new BasicStroke());
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
