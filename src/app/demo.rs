//! `demo`: a throwaway repository with a dead worker in every state.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::Session;
use crate::error::Error;
use crate::model::Worker;

/// The scenario script, shared with the tests (`fixtures/demo.sh`).
pub const DEMO_SCRIPT: &str = include_str!("../../fixtures/demo.sh");

/// What `demo` built: the repository and its workers as `status` sees them.
#[derive(Debug)]
pub struct Demo {
    /// The demo repository (`<dir>/repo`).
    pub repo_dir: PathBuf,
    /// Its workers, classified.
    pub workers: Vec<Worker>,
    /// git's `color.ui` there.
    pub color_ui: Option<String>,
}

/// `demo`: build the scenario into `dir` (default: a new directory under the system temp
/// dir), enter its repository (the process's current directory changes) and classify its
/// workers.
///
/// Errors: [`Error::Usage`] when `dir` is not empty; as [`build`]; then as `status`.
pub fn demo(dir: Option<PathBuf>) -> Result<(Demo, Vec<String>), Error> {
    let dir = match dir {
        Some(d) => d,
        None => {
            let base = std::env::temp_dir().join(format!("git-recode-demo-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&base);
            base
        }
    };
    if dir.exists()
        && std::fs::read_dir(&dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    {
        return Err(Error::Usage(format!(
            "{} is not empty: give a new directory with --dir",
            dir.display()
        )));
    }
    build(&dir)?;
    let repo_dir = dir.join("repo");
    std::env::set_current_dir(&repo_dir).map_err(|source| Error::Io {
        what: "enter",
        path: repo_dir.display().to_string(),
        source,
    })?;
    let s = Session::open()?;
    let roster = crate::snapshot::roster(&s.repo, &s.cfg, None)?;
    let workers = super::status::workers(&s, &crate::snapshot::Options::default(), roster)?;
    let demo = Demo {
        repo_dir,
        workers,
        color_ui: s.color_ui(),
    };
    Ok((demo, s.take_warnings()))
}

/// Run the scenario script into `dir` with this binary as `git-recode`.
///
/// Errors: [`Error::Program`] when bash or git fails.
pub fn build(dir: &Path) -> Result<(), Error> {
    let exe = std::env::current_exe().map_err(|e| Error::Program {
        what: "cannot find this program",
        why: e.to_string(),
    })?;
    let mut bash = Command::new("bash");
    // No forge token for the script (SPEC 1.2: no child process gets one).
    crate::git::unset_tokens(&mut bash);
    let out = bash
        .arg("-c")
        .arg(DEMO_SCRIPT)
        .arg("demo.sh")
        .arg(dir)
        .env("RECODE_BIN", exe)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Program {
            what: "cannot run bash for the demo script",
            why: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(Error::Program {
            what: "the demo script failed",
            why: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(())
}
