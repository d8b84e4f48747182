//! `git recode hook install|uninstall|status|post-commit`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::cli::Ctx;
use crate::error::{EXIT_OK, EXIT_REFUSED, Error};
use crate::hook::{self, Installed};
use crate::ledger::{self, Body, Event};
use crate::{git, snapshot};

/// The post-commit milestone hook
#[derive(clap::Subcommand, Debug)]
pub enum HookCommand {
    /// Install the post-commit hook into the hooks directory git uses (core.hooksPath honoured)
    ///
    /// Refuses (exit 3) where a post-commit hook git-recode did not write exists, unless
    /// --chain, which keeps that hook and runs it first with the same arguments.
    Install {
        /// Keep an existing hook and run it first
        #[arg(long)]
        chain: bool,
    },
    /// Remove the hook, restoring exactly what was there before
    Uninstall,
    /// Say whether the hook is installed, and where
    Status,
    /// Ledger a milestone when HEAD's message has a Recode-Phase: trailer (run by the hook)
    ///
    /// Never fails a commit: problems are printed on stderr and the exit code is 0.
    PostCommit,
}

/// The hooks directory git uses (`git rev-parse --git-path hooks` is the reference).
fn hooks_dir() -> Result<PathBuf, Error> {
    let out = git::read(
        Path::new("."),
        &["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
    )?;
    Ok(PathBuf::from(String::from_utf8_lossy(&out).trim()))
}

fn io(what: &'static str, p: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = p.display().to_string();
    move |source| Error::Io { what, path, source }
}

fn write_hook(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(io("write the hook", path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(io("make executable", path))
}

/// Run `hook …`.
///
/// Errors: [`Error::Refused`]-like refusals print a hint and return exit 3; I/O errors.
pub fn run(cmd: HookCommand) -> Result<i32, Error> {
    match cmd {
        HookCommand::PostCommit => {
            if hook::certainly_no_phase() {
                return Ok(EXIT_OK);
            }
            if let Err(e) = post_commit() {
                eprint!("git-recode post-commit: {}", e.render());
            }
            Ok(EXIT_OK)
        }
        HookCommand::Install { chain } => {
            let _ = Ctx::open()?;
            let dir = hooks_dir()?;
            if let Some(manager) = hook::managed_by(&dir) {
                eprintln!(
                    "error: the hooks directory {} belongs to {manager}, which regenerates it",
                    dir.display()
                );
                eprintln!(
                    "hint: add this line to {manager}'s own post-commit hook (e.g. .husky/post-commit):"
                );
                crate::say!("git-recode hook post-commit || true");
                return Ok(EXIT_REFUSED);
            }
            let hook_path = dir.join("post-commit");
            match hook::installed(&dir) {
                Installed::Ours | Installed::Chained | Installed::Edited => {
                    crate::say!("already installed in {}", hook_path.display());
                }
                Installed::Nothing => {
                    std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
                    write_hook(&hook_path, &hook::script(false))?;
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
                    std::fs::rename(&hook_path, &kept)
                        .map_err(io("keep the existing hook as", &kept))?;
                    write_hook(&hook_path, &hook::script(true))?;
                    crate::say!(
                        "installed {} (runs the previous hook, kept as {}, first)",
                        hook_path.display(),
                        kept.display()
                    );
                }
                Installed::Foreign => {
                    eprintln!(
                        "error: {} exists and git-recode did not write it",
                        hook_path.display()
                    );
                    eprintln!("hint: `git recode hook install --chain` keeps it and runs it first");
                    return Ok(EXIT_REFUSED);
                }
            }
            Ok(EXIT_OK)
        }
        HookCommand::Uninstall => {
            let _ = Ctx::open()?;
            let dir = hooks_dir()?;
            let hook_path = dir.join("post-commit");
            match hook::installed(&dir) {
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
                    let text =
                        std::fs::read_to_string(&hook_path).map_err(io("read", &hook_path))?;
                    std::fs::write(&hook_path, hook::splice_out(&text))
                        .map_err(io("write", &hook_path))?;
                    crate::say!("removed git-recode's lines from {}", hook_path.display());
                }
                Installed::Nothing | Installed::Foreign => {
                    crate::say!("not installed in {}", dir.display())
                }
            }
            Ok(EXIT_OK)
        }
        HookCommand::Status => {
            let _ = Ctx::open()?;
            let dir = hooks_dir()?;
            let what = match hook::installed(&dir) {
                Installed::Ours | Installed::Edited => "installed",
                Installed::Chained => "installed (chained after the previous hook)",
                Installed::Nothing => "not installed",
                Installed::Foreign => {
                    "not installed (a post-commit hook git-recode did not write is there)"
                }
            };
            crate::say!("{what}: {}", dir.join("post-commit").display());
            Ok(EXIT_OK)
        }
    }
}

fn post_commit() -> Result<(), Error> {
    let ctx = Ctx::open()?;
    let Some((head, message)) = hook::head_commit(&ctx.repo) else {
        return Ok(());
    };
    let Some(phase) = hook::phase_of(&message) else {
        return Ok(());
    };
    // The branch: HEAD's, or during a rebase the one it started from.
    let git_dir = ctx.repo.git_dir().to_path_buf();
    let branch = ctx
        .repo
        .head_name()
        .ok()
        .flatten()
        .map(|n| n.shorten().to_string())
        .or_else(|| {
            ["rebase-merge", "rebase-apply"].iter().find_map(|d| {
                std::fs::read_to_string(git_dir.join(d).join("head-name"))
                    .ok()
                    .and_then(|n| n.trim().strip_prefix("refs/heads/").map(str::to_string))
            })
        });
    let Some(branch) = branch else {
        return Ok(()); // detached outside a rebase: no branch to ledger against
    };
    let task = ctx.cfg.key_of(&branch);
    let head_hex = head.to_hex().to_string();
    // Post-commit fires on every rebase pick and amend: one milestone per (head, phase).
    let refs = snapshot::notes_refs(&ctx.repo, &ctx.cfg);
    let (existing, _) = ledger::read_task(&ctx.repo, &refs, &task)?;
    let seen = existing.events().any(|e| {
        e.head.as_deref() == Some(head_hex.as_str())
            && matches!(&e.body, Body::Milestone { phase: p, .. } if *p == phase)
    });
    if seen {
        return Ok(());
    }
    let session_id = std::env::var(hook::SESSION_ENV)
        .ok()
        .filter(|s| !s.is_empty());
    let event = Event::new(
        ctx.now,
        &task,
        Some(&branch),
        Body::Milestone { phase, session_id },
    )
    .with_head(Some(head_hex));
    ledger::append(&ctx.repo, &ctx.cfg.notes_ref, event)?;
    Ok(())
}
