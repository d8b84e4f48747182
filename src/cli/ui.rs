//! The one value that owns the terminal for a run: where output goes (stdout for results,
//! stderr for warnings and errors) and whether it is coloured. Built once in
//! [`super::main`] from `--color`, then refined by [`super::Ctx::open`] with git's
//! `color.ui`; every command prints through it, and library code never prints.

use std::io::Write;

use crate::render::Style;

/// The terminal of one run.
#[derive(Clone, Debug)]
pub struct Ui {
    /// `--color` as given (`auto` when not given).
    choice: clap::ColorChoice,
    /// What human renderings look like.
    style: Style,
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
        }
    }

    /// How human output looks.
    pub fn style(&self) -> Style {
        self.style
    }

    /// Print each warning once, `warning: …` on stderr, forge credentials redacted
    /// ([`crate::redact::redact`]).
    pub fn warn(&self, warnings: &[String]) {
        let mut err = std::io::stderr().lock();
        for w in warnings {
            let _ = writeln!(err, "warning: {}", crate::redact::redact(w));
        }
    }

    /// stdout, for results.
    pub fn out(&self) -> std::io::StdoutLock<'static> {
        std::io::stdout().lock()
    }
}

impl Default for Ui {
    /// `auto` (as when `--color` is not given).
    fn default() -> Ui {
        Ui::new(clap::ColorChoice::Auto)
    }
}
