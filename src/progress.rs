//! Progress on stderr for long work (`status` on many worktrees, `recover --all`): only
//! on a terminal, only once the work has taken more than a moment, never in machine modes.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How long work runs before a progress bar appears.
const SHOW_AFTER: Duration = Duration::from_millis(300);

/// A progress bar that stays hidden until `SHOW_AFTER` has passed (and always when
/// disabled or stderr is not a terminal). Cheap to clone and share across threads.
#[derive(Clone)]
pub(crate) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    start: Instant,
}

impl Progress {
    /// A bar of `len` steps labelled `what`; `enabled` is false in machine modes.
    pub(crate) fn new(len: u64, what: &'static str, enabled: bool) -> Progress {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(len),
                indicatif::ProgressDrawTarget::hidden(),
            );
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
            {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(what);
            bar
        });
        Progress {
            bar,
            start: Instant::now(),
        }
    }

    /// One step done.
    pub(crate) fn inc(&self) {
        if let Some(bar) = &self.bar {
            if bar.is_hidden() && self.start.elapsed() > SHOW_AFTER {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            }
            bar.inc(1);
        }
    }

    /// Remove the bar from the screen.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
