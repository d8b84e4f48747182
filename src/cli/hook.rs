//! `git recode hook install|uninstall|status|post-commit`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::cli::{Ctx, Ui};
use crate::error::{EXIT_OK, Error};

use crate::hook::{self, Installed, advice, walk};

/// The post-commit milestone hook
#[derive(clap::Subcommand, Debug)]
pub enum HookCommand {
    /// Install the post-commit hook into the hooks directory git uses (core.hooksPath honoured)
    ///
    /// Refuses (exit 3) where a post-commit hook git-recode did not write exists, unless
    /// --chain, which keeps that hook and runs it first with the same arguments. Never
    /// writes a tracked file nor inside a working tree: where a hook manager (husky,
    /// lefthook, pre-commit, simple-git-hooks) or a core.hooksPath in the working tree holds
    /// the hooks, it prints the line or stanza to add to their configuration (exit 3).
    Install {
        /// Keep an existing hook and run it first
        #[arg(long)]
        chain: bool,
    },
    /// Remove the hook, restoring exactly what was there before
    Uninstall,
    /// Say, for each worktree, whether a commit there reaches the milestone hook
    ///
    /// Follows core.hooksPath (worktree config included) and hook managers' configuration
    /// in each worktree. The first line answers for this worktree.
    Status {
        /// One JSON document: {"schema":1,"worktrees":[...]}
        #[arg(long)]
        json: bool,
    },
    /// Ledger a milestone when HEAD's message has a Recode-Phase: trailer (run by the hook)
    ///
    /// Never fails a commit, and never delays one by more than 50 ms: problems are printed
    /// on one line on stderr and the exit code is 0.
    PostCommit,
}

/// How long the post-commit hook may take before it gives up on the ledger, from its start.
const HOOK_BUDGET: std::time::Duration = std::time::Duration::from_millis(45);

fn io(what: &'static str, p: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = p.display().to_string();
    move |source| Error::Io { what, path, source }
}

fn write_hook(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(io("write the hook", path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(io("make executable", path))
}

/// This worktree's top (the git dir in a bare repository) and the hooks directory git uses here.
fn here(repo: &gix::Repository) -> (PathBuf, walk::HooksDir) {
    let wt = walk::normalize(repo.workdir().unwrap_or_else(|| repo.git_dir()));
    let dir = walk::hooks_dir(repo, &wt, repo.git_dir());
    (wt, dir)
}

/// Run `hook …`.
///
/// Errors: refusals print a hint and return exit 3; I/O errors.
pub fn run(cmd: HookCommand, ui: &Ui) -> Result<i32, Error> {
    match cmd {
        HookCommand::PostCommit => Ok(post_commit_hook()),
        HookCommand::Install { chain } => install(chain, ui),
        HookCommand::Uninstall => uninstall(ui),
        HookCommand::Status { json } => status(json, ui),
    }
}

/// `hook uninstall`: remove our script, restore a chained hook, or splice our lines out.
fn uninstall(ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let (_, dir) = here(&ctx.repo);
    let dir = dir.path;
    let hook_path = dir.join("post-commit");
    let ours = hook::installed(&dir);
    if matches!(
        ours,
        Installed::Ours | Installed::Chained | Installed::Edited
    ) && walk::in_a_working_tree(&ctx.repo, &dir)
    {
        return Err(Error::Refused {
            message: format!(
                "{} is inside a working tree: git-recode does not write there",
                hook_path.display()
            ),
            hint: format!(
                "remove the lines from {} to {} yourself",
                hook::BEGIN,
                hook::END
            ),
        });
    }
    match ours {
        Installed::Ours => {
            std::fs::remove_file(&hook_path).map_err(io("remove", &hook_path))?;
            crate::say!("removed {}", hook_path.display());
        }
        Installed::Chained => {
            let kept = dir.join(format!("post-commit{}", hook::CHAINED_SUFFIX));
            std::fs::rename(&kept, &hook_path).map_err(io("restore", &kept))?;
            crate::say!("restored the previous hook {}", hook_path.display());
        }
        Installed::Edited => {
            let text = std::fs::read_to_string(&hook_path).map_err(io("read", &hook_path))?;
            std::fs::write(&hook_path, hook::splice_out(&text)).map_err(io("write", &hook_path))?;
            crate::say!("removed git-recode's lines from {}", hook_path.display());
        }
        Installed::Nothing | Installed::Foreign => {
            crate::say!("not installed in {}", dir.display())
        }
    }
    Ok(EXIT_OK)
}

/// `hook status`: whether commits in this worktree (and the others) reach the hook.
fn status(json: bool, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let all = hook::reach(&ctx.repo);
    if json {
        let doc = crate::wire::HookStatusDoc::new(&all);
        let text = serde_json::to_string(&doc).expect("plain structs serialize");
        crate::say!("{text}");
        return Ok(EXIT_OK);
    }
    if let Some(r) = all.iter().find(|r| r.current) {
        match (&r.via, &r.why) {
            (Some(via), _) => crate::say!("installed: {via}"),
            (None, why) => crate::say!("not installed: {}", why.as_deref().unwrap_or("")),
        }
    }
    if all.len() > 1 || all.iter().all(|r| !r.current) {
        for r in &all {
            match (&r.via, &r.why) {
                (Some(via), _) => crate::say!("  {}: reached via {via}", r.path.display()),
                (None, why) => crate::say!(
                    "  {}: not reached: {}",
                    r.path.display(),
                    why.as_deref().unwrap_or("")
                ),
            }
        }
    }
    Ok(EXIT_OK)
}

/// `hook install`: write the hook where the hooks directory is git's own; elsewhere print
/// what to add and refuse (exit 3).
fn install(chain: bool, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let (wt, dir) = here(&ctx.repo);
    let hook_path = dir.path.join("post-commit");
    let kind = hook::installed(&dir.path);
    if matches!(
        kind,
        Installed::Ours | Installed::Chained | Installed::Edited
    ) {
        crate::say!("already installed in {}", hook_path.display());
        return Ok(EXIT_OK);
    }
    let (manager, verdict) = walk::reach_one(&wt, &dir);
    if let Ok(via) = verdict {
        crate::say!("already installed: {via}");
        return Ok(EXIT_OK);
    }
    if manager.is_some() || walk::in_a_working_tree(&ctx.repo, &dir.path) {
        let a = advice::advice(manager, &wt, &dir);
        print!("{}", a.text);
        let what = if a.text.lines().count() > 1 {
            "the stanza"
        } else {
            "the line"
        };
        let mut hint = format!("add {what} printed above to {}", a.file);
        if let Some(then) = &a.then {
            hint.push_str(&format!("\nthen run `{then}`"));
        }
        hint.push_str(&format!(
            "\n`git recode hook status` will then report: {}",
            a.status
        ));
        return Err(Error::Refused {
            message: a.reason.clone(),
            hint,
        });
    }
    let dir = dir.path;
    match kind {
        Installed::Ours | Installed::Chained | Installed::Edited => {}
        Installed::Nothing => {
            std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
            let text = match hook::direct_interpreter() {
                Some(exe) => hook::direct_script(&exe),
                None => hook::script(false),
            };
            write_hook(&hook_path, &text)?;
            crate::say!("installed {}", hook_path.display());
        }
        Installed::Foreign if chain => {
            let kept = dir.join(format!("post-commit{}", hook::CHAINED_SUFFIX));
            if kept.exists() {
                return Err(Error::Refused {
                    message: format!("{} already exists: not overwriting it", kept.display()),
                    hint: "move it away (it is a hook kept by an earlier --chain install), then install again".into(),
                });
            }
            std::fs::rename(&hook_path, &kept).map_err(io("keep the existing hook as", &kept))?;
            write_hook(&hook_path, &hook::script(true))?;
            crate::say!(
                "installed {} (runs the previous hook, kept as {}, first)",
                hook_path.display(),
                kept.display()
            );
        }
        Installed::Foreign => {
            return Err(Error::Refused {
                message: format!(
                    "{} exists and git-recode did not write it",
                    hook_path.display()
                ),
                hint: "`git recode hook install --chain` keeps it and runs it first".into(),
            });
        }
    }
    Ok(EXIT_OK)
}

/// The post-commit hook, as git runs it (`hook post-commit`, or a [`hook::direct_script`]
/// taken straight from `main` before any argument parsing): never fails, at most one line
/// on stderr. Returns the exit code, always 0.
pub fn post_commit_hook() -> i32 {
    let deadline = std::time::Instant::now() + HOOK_BUDGET;
    if hook::certainly_no_phase() {
        return EXIT_OK;
    }
    if let Err(e) = post_commit(deadline) {
        let mut line = format!("git-recode post-commit: error: {e}");
        if let Some(h) = e.hint() {
            line.push_str(&format!("; hint: {h}"));
        }
        eprintln!("{}", line.replace('\n', " "));
    }
    EXIT_OK
}

fn post_commit(deadline: std::time::Instant) -> Result<(), Error> {
    let ctx = Ctx::open(&Ui::default())?;
    match hook::commit::post_commit(
        &ctx.repo,
        &ctx.cfg,
        ctx.now,
        deadline,
        HOOK_BUDGET.as_millis(),
    ) {
        Ok(_) => Ok(()),
        Err(hook::commit::CommitError::Ledger(e)) => Err(e.into()),
        Err(e) => Err(Error::Partial(e.to_string())),
    }
}
