//! `doctor`: the loop's set-up, one check at a time.

use crate::error::Error;

/// What `doctor` found: each check, the exit code (0 with no `fail`, else 1) and git's
/// `color.ui` of the repository (doctor opens no [`super::Session`]: it must run where
/// `recode.*` values are bad, to name them).
#[derive(Debug)]
pub struct Doctor {
    /// The checks, in the order they ran.
    pub checks: Vec<crate::doctor::Check>,
    /// 0 with no `fail`, else 1.
    pub code: i32,
    /// git's `color.ui`.
    pub color_ui: Option<String>,
}

/// `doctor`: run every check on the repository in the current directory.
///
/// Errors: [`Error::Repo`] outside a repository, [`Error::Clock`]; failed checks are
/// results (exit 1), not errors.
pub fn doctor() -> Result<Doctor, Error> {
    let now = crate::clock::now()?;
    let repo = crate::repo::open(None)?;
    let checks = crate::doctor::run(&repo, now);
    Ok(Doctor {
        code: crate::doctor::exit_code(&checks),
        checks,
        color_ui: crate::config::string(&repo, "color.ui"),
    })
}

/// The document `doctor --json` prints.
pub fn doctor_doc(d: &Doctor) -> crate::wire::DoctorDoc {
    crate::wire::DoctorDoc {
        schema: crate::wire::SCHEMA,
        ok: d.code == crate::error::EXIT_OK,
        checks: d.checks.iter().map(Into::into).collect(),
    }
}
