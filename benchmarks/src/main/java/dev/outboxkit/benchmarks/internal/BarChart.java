package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.Numbers;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;

/**
 * A grouped bar chart drawn with Java2D: groups along the x axis, one colored bar per series in
 * each group, optional min–max whiskers, an optional target mark per group, linear or
 * logarithmic y axis. Bars without a value say "not measured". Enough for the report's charts,
 * with no chart library.
 */
public final class BarChart {

    /** One bar: its series, its value (null: not measured) and its spread (nullable). */
    public record Bar(String series, Double value, Double low, Double high) {
        public static Bar of(String series, Double value) {
            return new Bar(series, value, null, null);
        }
    }

    /** One group of bars under one label, with an optional target line. */
    public record Group(String label, List<Bar> bars, Double target) {
    }

    private static final Color[] PALETTE = {
        new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868), new Color(0xC44E52),
        new Color(0x8172B3), new Color(0x937860)};

    /** The colour of the {@code i}-th series (shared with {@link LineChart}). */
    static Color colour(int i) {
        return PALETTE[i % PALETTE.length];
    }

    private static final int BAR = 34;
    private static final int GAP = 46;
    /** The plot's margins and height, shared with {@link LineChart}. */
    static final int LEFT = 84;
    static final int RIGHT = 24;
    static final int TOP = 70;
    static final int BOTTOM = 70;
    static final int PLOT_HEIGHT = 300;
    private static final Font TITLE_FONT = new Font(Font.SANS_SERIF, Font.BOLD, 15);

    private final String title;
    private final String unit;
    private final boolean log;

    public BarChart(String title, String unit, boolean logScale) {
        this.title = title;
        this.unit = unit;
        this.log = logScale;
    }

    public void write(List<Group> groups, List<String> series, Path png) throws IOException {
        if (!ImageIO.write(render(groups, series), "png", png.toFile())) {
            throw new IOException("no PNG writer in this JDK");
        }
    }

    public BufferedImage render(List<Group> groups, List<String> series) {
        int groupWidth = Math.max(1, series.size()) * BAR + GAP;
        int width = Math.max(Math.max(560, LEFT + RIGHT + titleWidth()), LEFT + RIGHT + Math.max(1, groups.size()) * groupWidth);
        int height = TOP + PLOT_HEIGHT + BOTTOM;
        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = begin(image, title);
        try {
            if (series.size() >= 2) {
                drawLegend(g, series);
            }
            Scale scale = scale(groups);
            drawAxis(g, scale, width);
            int x = LEFT + GAP / 2;
            for (Group group : groups) {
                drawGroup(g, group, series, scale, x);
                x += groupWidth;
            }
            if (groups.isEmpty()) {
                g.setColor(Color.GRAY);
                g.drawString("nothing measured yet", LEFT + 20, TOP + PLOT_HEIGHT / 2);
            }
        } finally {
            g.dispose();
        }
        return image;
    }

    /** A white canvas with {@code title} on top, anti-aliased (shared with {@link LineChart}); dispose it after. */
    static Graphics2D begin(BufferedImage image, String title) {
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, image.getWidth(), image.getHeight());
        g.setColor(Color.BLACK);
        g.setFont(TITLE_FONT);
        g.drawString(title, LEFT, 24);
        return g;
    }

    /** A horizontal grid line at {@code y} across the plot, labelled on the axis (shared with {@link LineChart}). */
    static void gridLine(Graphics2D g, int y, int width, String label) {
        FontMetrics fm = g.getFontMetrics();
        g.setColor(new Color(0xE6E6E6));
        g.drawLine(LEFT, y, width - RIGHT, y);
        g.setColor(Color.DARK_GRAY);
        g.drawString(label, LEFT - 6 - fm.stringWidth(label), y + fm.getAscent() / 2 - 1);
    }

    private int titleWidth() {
        Graphics2D g = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB).createGraphics();
        try {
            return g.getFontMetrics(TITLE_FONT).stringWidth(title);
        } finally {
            g.dispose();
        }
    }

    /** Maps a value to a y pixel. */
    private record Scale(double min, double max, boolean log, List<Double> ticks) {
        int y(double v) {
            double f = log ? (Math.log10(Math.max(v, min)) - Math.log10(min)) / (Math.log10(max) - Math.log10(min))
                    : (v - min) / (max - min);
            return TOP + PLOT_HEIGHT - (int) Math.round(Math.max(0, Math.min(1, f)) * PLOT_HEIGHT);
        }
    }

    private Scale scale(List<Group> groups) {
        double hi = 0;
        double lo = Double.MAX_VALUE;
        for (Group group : groups) {
            for (Bar bar : group.bars()) {
                for (Double v : new Double[] {bar.value(), bar.high(), bar.low()}) {
                    if (v != null && v > 0) {
                        hi = Math.max(hi, v);
                        lo = Math.min(lo, v);
                    }
                }
            }
            if (group.target() != null) {
                hi = Math.max(hi, group.target());
                lo = Math.min(lo, group.target());
            }
        }
        if (hi <= 0) {
            hi = 1;
            lo = 0.1;
        }
        List<Double> ticks = new ArrayList<>();
        if (log) {
            double min = Math.pow(10, Math.floor(Math.log10(lo)));
            double max = Math.pow(10, Math.ceil(Math.log10(hi * 1.01)));
            for (double t = min; t <= max * 1.0001; t *= 10) {
                ticks.add(t);
            }
            return new Scale(min, max, true, ticks);
        }
        double step = niceStep(hi * 1.15 / 5);
        double max = Math.ceil(hi * 1.15 / step) * step;
        for (double t = 0; t <= max + step / 2; t += step) {
            ticks.add(t);
        }
        return new Scale(0, max, false, ticks);
    }

    /** 1, 2 or 5 times a power of ten, at least {@code raw}. */
    static double niceStep(double raw) {
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * magnitude >= raw) {
                return m * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private void drawAxis(Graphics2D g, Scale scale, int width) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (double tick : scale.ticks()) {
            gridLine(g, scale.y(tick), width, Numbers.format(tick));
        }
        g.setColor(Color.BLACK);
        g.drawLine(LEFT, TOP, LEFT, TOP + PLOT_HEIGHT);
        g.drawLine(LEFT, TOP + PLOT_HEIGHT, width - RIGHT, TOP + PLOT_HEIGHT);
        g.drawString(unit + (log ? " (log scale)" : ""), 8, TOP - 10);
    }

    /** One coloured square and name per series, under the title (shared with {@link LineChart}). */
    static void drawLegend(Graphics2D g, List<String> series) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        FontMetrics fm = g.getFontMetrics();
        int x = LEFT;
        for (int i = 0; i < series.size(); i++) {
            g.setColor(PALETTE[i % PALETTE.length]);
            g.fillRect(x, 36, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(series.get(i), x + 16, 46);
            x += 16 + fm.stringWidth(series.get(i)) + 18;
        }
    }

    private void drawGroup(Graphics2D g, Group group, List<String> series, Scale scale, int x0) {
        int base = TOP + PLOT_HEIGHT;
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
        for (Bar bar : group.bars()) {
            int i = Math.max(0, series.indexOf(bar.series()));
            int x = x0 + i * BAR;
            if (bar.value() == null) {
                g.setColor(Color.GRAY);
                drawCentered(g, "not", x + BAR / 2, base - 16);
                drawCentered(g, "measured", x + BAR / 2, base - 4);
                continue;
            }
            int y = scale.y(bar.value());
            g.setColor(PALETTE[i % PALETTE.length]);
            g.fillRect(x + 3, y, BAR - 6, base - y);
            if (bar.low() != null && bar.high() != null && bar.high() > bar.low()) {
                int yl = scale.y(bar.low());
                int yh = scale.y(bar.high());
                g.setColor(Color.BLACK);
                g.drawLine(x + BAR / 2, yl, x + BAR / 2, yh);
                g.drawLine(x + BAR / 2 - 5, yl, x + BAR / 2 + 5, yl);
                g.drawLine(x + BAR / 2 - 5, yh, x + BAR / 2 + 5, yh);
                y = Math.min(y, yh);
            }
            g.setColor(Color.BLACK);
            drawCentered(g, Numbers.format(bar.value()), x + BAR / 2, y - 3);
        }
        int groupWidth = Math.max(1, series.size()) * BAR;
        if (group.target() != null) {
            int y = scale.y(group.target());
            g.setColor(new Color(0xC00000));
            g.setStroke(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
            g.drawLine(x0 - 4, y, x0 + groupWidth + 4, y);
            g.setStroke(new BasicStroke());
            g.drawString("target " + Numbers.format(group.target()), x0, y - 3);
        }
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        int line = 0;
        for (String part : wrap(group.label(), groupWidth + GAP - 6, g.getFontMetrics())) {
            drawCentered(g, part, x0 + groupWidth / 2, base + 16 + line++ * 13);
        }
    }

    private static void drawCentered(Graphics2D g, String text, int cx, int y) {
        g.drawString(text, cx - g.getFontMetrics().stringWidth(text) / 2, y);
    }

    /** Splits a label at spaces and underscores into lines no wider than {@code width}. */
    static List<String> wrap(String label, int width, FontMetrics fm) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : label.split("(?<=[ _])")) {
            if (line.length() > 0 && fm.stringWidth(line + word) > width) {
                lines.add(line.toString().trim());
                line.setLength(0);
            }
            line.append(word);
        }
        if (line.length() > 0) {
            lines.add(line.toString().trim());
        }
        return lines;
    }
}
