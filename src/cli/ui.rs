//! The one value that owns the terminal for a run: where output goes (stdout for results,
//! stderr for warnings and errors) and whether it is coloured. Built once in
//! [`super::main`] from `--color`, then refined with git's `color.ui` once a
//! [`crate::app::Session`] is open; every command prints through it, and library code never prints.

use std::io::Write;

use crate::app::{Error, Session};
use crate::render::{Screen, Style};

/// The terminal of one run.
#[derive(Clone, Debug)]
pub(crate) struct Ui {
    /// `--color` as given (`auto` when not given).
    choice: clap::ColorChoice,
    /// What human renderings look like.
    style: Style,
}

impl Ui {
    /// From `--color` alone (no repository yet): `always`/`never`, else `NO_COLOR`,
    /// `CLICOLOR_FORCE`, else whether stdout is a terminal ([`crate::render::decide_color`]).
    pub(crate) fn new(choice: clap::ColorChoice) -> Ui {
        Ui {
            choice,
            style: Style {
                color: crate::render::decide_color(choice, None),
            },
        }
    }

    /// The same choice, with git's `color.ui` (of the repository) taken into account (as git does:
    /// `--color`, then `NO_COLOR`/`CLICOLOR_FORCE`, then `color.ui`, then the terminal).
    pub(crate) fn with_color_ui(&self, color_ui: Option<String>) -> Ui {
        Ui {
            choice: self.choice,
            style: Style {
                color: crate::render::decide_color(self.choice, color_ui.as_deref()),
            },
        }
    }

    /// How human output looks.
    pub(crate) fn style(&self) -> Style {
        self.style
    }

    /// Print each warning once, `warning: …` on stderr, forge credentials redacted
    /// ([`crate::render::redact`]) and control characters escaped ([`Screen`]: a warning
    /// quoting a ledger line or a host name never reaches the terminal raw).
    pub(crate) fn warn(&self, warnings: &[String]) {
        let mut err = Screen::new(std::io::stderr().lock(), Style::default());
        for w in warnings {
            let _ = writeln!(err, "warning: {}", crate::render::redact(w));
        }
    }

    /// stdout, for machine output (`--json`, `--porcelain`: exact, escaped by its format).
    pub(crate) fn out(&self) -> std::io::StdoutLock<'static> {
        std::io::stdout().lock()
    }

    /// stdout for human output: every control character escaped but the line break and
    /// the palette's own colour codes ([`Screen`], SPEC 1.2 "Untrusted input stays out").
    pub(crate) fn screen(&self) -> Screen<std::io::StdoutLock<'static>> {
        Screen::new(std::io::stdout().lock(), self.style)
    }
}

impl Ui {
    /// Open the run's [`Session`], and this terminal refined with its `color.ui`.
    ///
    /// Errors: as [`Session::open`].
    pub(crate) fn session(&self) -> Result<(Session, Ui), Error> {
        let s = Session::open()?;
        let ui = self.with_color_ui(s.color_ui());
        Ok((s, ui))
    }

    /// Show the warnings `s` collected (each once), then pass `r` on: a command's warnings
    /// are shown whether it succeeded or not.
    pub(crate) fn after<T>(&self, s: &Session, r: Result<T, Error>) -> Result<T, Error> {
        self.warn(&s.take_warnings());
        r
    }
}

impl Default for Ui {
    /// `auto` (as when `--color` is not given).
    fn default() -> Ui {
        Ui::new(clap::ColorChoice::Auto)
    }
}
