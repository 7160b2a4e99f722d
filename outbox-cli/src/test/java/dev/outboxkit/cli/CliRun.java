package dev.outboxkit.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

/** Runs the CLI in-process with a given environment and captures its output. */
record CliRun(int exitCode, String out, String err) {

    static CliRun run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(env, new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRun(code, out.toString(), err.toString());
    }

    String all() {
        return out + err;
    }
}
