//! `git recode demo`: a throwaway repository with a dead worker in every state.

use std::io::Write;
use std::path::PathBuf;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};
use crate::render;

/// Build a throwaway repository full of dead workers and show what git-recode sees
///
/// The repository holds one worker in each state: empty, half-done (dirty and committed),
/// publishable, needs-human (a rebase in progress), stalled, running and orphaned.
/// `status` is printed, then what `recover` would do with each worker.
#[derive(clap::Args, Debug)]
pub(crate) struct DemoArgs {
    /// Where to build it [default: a new directory under the system temp dir]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Run `demo`.
///
/// Errors: as [`app::demo`].
pub(crate) fn run(args: DemoArgs, ui: &Ui) -> Result<i32, Error> {
    let (demo, warnings) = app::demo(args.dir)?;
    let ui = ui.with_color_ui(demo.color_ui.clone());
    ui.warn(&warnings);
    let repo_dir = demo.repo_dir.display();
    let mut out = ui.out();
    writeln!(
        out,
        "A demo repository with dead workers is in {repo_dir}\n"
    )
    .map_err(out_err)?;
    writeln!(out, "$ git -C {repo_dir} recode status").map_err(out_err)?;
    render::table(&mut out, &demo.workers, ui.style()).map_err(out_err)?;
    writeln!(out, "\nWhat `git recode recover --all` would do:").map_err(out_err)?;
    for wk in &demo.workers {
        writeln!(
            out,
            "  {:<28} {:<10} {}",
            wk.branch,
            wk.action.as_str(),
            render::explain(wk)
        )
        .map_err(out_err)?;
    }
    writeln!(
        out,
        "\nTry: cd {repo_dir} && git recode classify <branch>   (remove the directory when done)"
    )
    .map_err(out_err)?;
    Ok(EXIT_OK)
}
