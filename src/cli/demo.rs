//! `git recode demo`: a throwaway repository with a dead worker in every state.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::cli::{Ctx, Ui, out_err};
use crate::error::{EXIT_OK, Error};
use crate::render;
use crate::snapshot::Options;

/// The scenario script, shared with the tests (`fixtures/demo.sh`).
pub const DEMO_SCRIPT: &str = include_str!("../../fixtures/demo.sh");

/// Build a throwaway repository full of dead workers and show what git-recode sees
///
/// The repository holds one worker in each state: empty, half-done (dirty and committed),
/// publishable, needs-human (a rebase in progress), stalled, running and orphaned.
/// `status` is printed, then what `recover` would do with each worker.
#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Where to build it [default: a new directory under the system temp dir]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Run the scenario script into `dir` with this binary as `git-recode`.
///
/// Errors: [`Error::Program`] when bash or git fails.
pub fn build(dir: &std::path::Path) -> Result<(), Error> {
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

/// Run `demo`.
///
/// Errors: as [`build`], then as `status`.
pub fn run(args: DemoArgs, ui: &Ui) -> Result<i32, Error> {
    let dir = match args.dir {
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
    let ctx = Ctx::open(ui)?;
    let roster = crate::snapshot::roster(&ctx.repo, &ctx.cfg, None)?;
    let workers = crate::cli::status::workers(&ctx, &Options::default(), roster)?;
    let mut out = std::io::stdout().lock();
    let w = |out: &mut std::io::StdoutLock, s: String| writeln!(out, "{s}").map_err(out_err);
    w(
        &mut out,
        format!(
            "A demo repository with dead workers is in {}\n",
            repo_dir.display()
        ),
    )?;
    w(
        &mut out,
        format!("$ git -C {} recode status", repo_dir.display()),
    )?;
    render::table(&mut out, &workers, ctx.ui.style()).map_err(out_err)?;
    w(
        &mut out,
        "\nWhat `git recode recover --all` would do:".into(),
    )?;
    for wk in &workers {
        w(
            &mut out,
            format!(
                "  {:<28} {:<10} {}",
                wk.branch,
                wk.action.as_str(),
                render::explain(wk)
            ),
        )?;
    }
    w(
        &mut out,
        format!(
            "\nTry: cd {} && git recode classify <branch>   (remove the directory when done)",
            repo_dir.display()
        ),
    )?;
    Ok(EXIT_OK)
}
