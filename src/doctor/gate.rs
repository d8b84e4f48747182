//! The `gate` check (SPEC 1.3 "The loop as people run it"): with `recode.gate` unset, an
//! agent's own `tests-green` milestone is all that stands between its claim and a
//! published branch.

use super::{Check, Level, check, ok};
use crate::config::Config;

/// `ok` naming the gate when `recode.gate` is set, else a warning with the fix.
pub(super) fn gate(cfg: &Config) -> Check {
    match &cfg.gate {
        Some(g) => ok(
            "gate",
            format!("recode.gate is `{g}`: it is re-run before every publish"),
        ),
        None => check(
            "gate",
            Level::Warn,
            "recode.gate is unset: nothing independent gates publishing (an agent's own tests-green milestone publishes its branch)".into(),
            Some("set your test command: `git config recode.gate 'cargo test'`".into()),
        ),
    }
}
