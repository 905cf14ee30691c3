package io.kvroute.bench.report;

import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/** A console progress bar; thread-safe because {@link ProgressBar#step()} is. */
final class TerminalProgress implements Progress {

    private final ProgressBar bar;

    TerminalProgress(String label, int total) {
        bar = new ProgressBarBuilder()
                .setTaskName(label)
                .setInitialMax(total)
                .setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(200)
                .continuousUpdate()
                .build();
    }

    @Override
    public void step() {
        bar.step();
    }

    @Override
    public void close() {
        bar.close();
    }
}
