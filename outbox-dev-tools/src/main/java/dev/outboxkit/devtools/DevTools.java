package dev.outboxkit.devtools;

import dev.outboxkit.cli.CommandProvider;
import java.util.List;

/** Gives the {@code outbox} command its laptop commands, {@code dev} and {@code demo} (found by ServiceLoader). */
public final class DevTools implements CommandProvider {

    @Override
    public List<Class<?>> commands() {
        return List.of(DevCommand.class, DemoCommand.class);
    }
}
