//! The one value that owns the terminal for a run: where output goes (stdout for results,
//! stderr for warnings and errors) and whether it is coloured. Built once in
//! [`super::main`] from `--color`, then refined by [`super::Ctx::open`] with git's
//! `color.ui`; every command prints through it, and library code never prints.

use std::io::Write;

use crate::render::{Screen, Style};

/// The terminal of one run.
#[derive(Clone, Debug)]
pub struct Ui {
    /// `--color` as given (`auto` when not given).
    choice: clap::ColorChoice,
    /// What human renderings look like.
    style: Style,
    /// The stale locks the run moved aside, each named in a warning at its end (a handle
    /// shared by every copy of this `Ui`, handed to the configuration by `Ctx::open`).
    moves: crate::lock::Moves,
}

impl Ui {
    /// From `--color` alone (no repository yet): `always`/`never`, else `NO_COLOR`,
    /// `CLICOLOR_FORCE`, else whether stdout is a terminal ([`crate::render::decide_color`]).
    pub fn new(choice: clap::ColorChoice) -> Ui {
        Ui {
            choice,
            style: Style {
                color: crate::render::decide_color(choice, None),
            },
            moves: crate::lock::Moves::default(),
        }
    }

    /// The same choice, with git's `color.ui` of `repo` taken into account (as git does:
    /// `--color`, then `NO_COLOR`/`CLICOLOR_FORCE`, then `color.ui`, then the terminal).
    pub fn for_repo(&self, repo: &gix::Repository) -> Ui {
        let color_ui = crate::config::string(repo, "color.ui");
        Ui {
            choice: self.choice,
            style: Style {
                color: crate::render::decide_color(self.choice, color_ui.as_deref()),
            },
            moves: self.moves.clone(),
        }
    }

    /// Where the run's stale-lock moves are reported ([`crate::lock::Moves`]).
    pub fn moves(&self) -> &crate::lock::Moves {
        &self.moves
    }

    /// How human output looks.
    pub fn style(&self) -> Style {
        self.style
    }

    /// Print each warning once, `warning: …` on stderr, forge credentials redacted
    /// ([`crate::redact::redact`]) and control characters escaped ([`Screen`]: a warning
    /// quoting a ledger line or a host name never reaches the terminal raw).
    pub fn warn(&self, warnings: &[String]) {
        let mut err = Screen::new(std::io::stderr().lock(), Style::default());
        for w in warnings {
            let _ = writeln!(err, "warning: {}", crate::redact::redact(w));
        }
    }

    /// stdout, for machine output (`--json`, `--porcelain`: exact, escaped by its format).
    pub fn out(&self) -> std::io::StdoutLock<'static> {
        std::io::stdout().lock()
    }

    /// stdout for human output: every control character escaped but the line break and
    /// the palette's own colour codes ([`Screen`], SPEC 1.2 "Untrusted input stays out").
    pub fn screen(&self) -> Screen<std::io::StdoutLock<'static>> {
        Screen::new(std::io::stdout().lock(), self.style)
    }
}

impl Default for Ui {
    /// `auto` (as when `--color` is not given).
    fn default() -> Ui {
        Ui::new(clap::ColorChoice::Auto)
    }
}
