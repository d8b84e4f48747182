//! The command line: one file per command; this dispatcher is one line per arm.
// Doc comments of the argument structs are the --help texts (`<path>`, `<prefix>`), not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::error::{EXIT_ERROR, EXIT_OK, Error};

pub mod classify;
pub mod demo;
pub mod hook;
pub mod log;
pub mod man;
pub mod record;
pub mod recover;
pub mod resume;
pub mod status;
pub mod sync;
pub mod ui;
pub mod verify;

pub use ui::Ui;

/// The version and the commit the binary was built from: `0.1.0 (abc123def456)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("GIT_RECODE_COMMIT"),
    ")"
);

const LONG_AFTER: &str = "\
Configuration (git config):
  recode.base            the branch work merges into [default: remote HEAD, else main, else master]
  recode.remote          where branches and notes go [default: origin]
  recode.branchPattern   which branches are workers [default: (?:^|/)issue-(?P<task>[0-9]+)(?:-|$)]
  recode.stallAfter      idle time before a worker with no exit is stalled [default: 30m]
  recode.maxAttempts     counted attempts before needs-human [default: 3]
  recode.gate            the test command run before publishing [default: unset]
  recode.notesRef        where ledgers live [default: refs/notes/recode]
  recode.agent           claude, codex or a command template [default: claude]
  recode.pushWip         push after a WIP commit [default: true]
  recode.secrets         files never pushed nor deleted [default: .env, .env.*, *.pem, ...]

Environment: RECODE_NOW replaces the clock; GH_TOKEN/GITHUB_TOKEN, GH_HOST and
RECODE_GITHUB_API select the forge; NO_COLOR turns colour off; RUST_LOG sets logging.

Exit codes: 0 done, 1 error, 2 bad usage, 3 refused for safety or capped (needs a human).

A loop tick:
  git recode status --porcelain | while IFS=$'\\t' read -r task branch live state action n; do
    case $action in
      resume) cmd=$(git recode resume \"$branch\" --output \"/tmp/p-$task.md\") && sh -c \"$cmd\"
              git recode record exit \"$branch\" --rc $? ;;
      delete|publish|wip-commit|escalate) git recode recover \"$branch\" ;;
    esac
  done";

/// Recover the work of coding-agent workers that die, stall or claim success they did not reach
///
/// git-recode classifies every worker branch (and its linked worktree) as a decision a
/// loop can act on — delete, publish, wip-commit, resume, escalate, wait — and keeps each
/// attempt's memory in git notes (refs/notes/recode), so it travels with the repository.
#[derive(Parser, Debug)]
#[command(
    name = "git-recode",
    bin_name = "git recode",
    version = VERSION,
    propagate_version = true,
    after_help = "Configuration: git config recode.* (listed in `git recode --help`).",
    after_long_help = LONG_AFTER
)]
pub struct Cli {
    /// Run as if started in <path> (like git's -C; may be repeated)
    #[arg(short = 'C', global = true, value_name = "path")]
    pub dirs: Vec<PathBuf>,
    /// When to colour human output: auto (a terminal, unless NO_COLOR or color.ui=false), always, never
    #[arg(long, global = true, value_name = "when", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
    /// Log more to stderr (-v debug, -vv trace; RUST_LOG also works)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The command
    #[command(subcommand)]
    pub command: Command,
}

/// The commands. Each `Args` struct's doc comment is its help text (first line: `-h`).
#[allow(missing_docs)]
#[derive(Subcommand, Debug)]
pub enum Command {
    Status(status::StatusArgs),
    Classify(classify::ClassifyArgs),
    /// Ledger an event: spawn, exit, gate, unblock, clear
    #[command(subcommand)]
    Record(record::RecordCommand),
    Recover(recover::RecoverArgs),
    Resume(resume::ResumeArgs),
    Verify(verify::VerifyArgs),
    Log(log::LogArgs),
    Sync(sync::SyncArgs),
    /// The post-commit milestone hook
    #[command(subcommand)]
    Hook(hook::HookCommand),
    Demo(demo::DemoArgs),
    Man(man::ManArgs),
    Completions(man::CompletionsArgs),
}

/// What every command needs: the repository, its configuration and the clock.
pub struct Ctx {
    /// The repository (opened from the current directory, after `-C`).
    pub repo: gix::Repository,
    /// `recode.*` configuration.
    pub cfg: Config,
    /// The clock (`RECODE_NOW`).
    pub now: jiff::Timestamp,
    /// The terminal: stdout, stderr and colour (git's `color.ui` included).
    pub ui: Ui,
}

impl Ctx {
    /// Open the repository in the current directory.
    ///
    /// Errors: [`Error::Repo`], [`Error::Config`], [`Error::Clock`].
    pub fn open(ui: &Ui) -> Result<Ctx, Error> {
        let now = crate::clock::now()?;
        let repo = crate::repo::open(None)?;
        let cfg = Config::load(&repo)?;
        let ui = ui.for_repo(&repo);
        Ok(Ctx { repo, cfg, now, ui })
    }
}

/// `println!` that treats a closed stdout (`git recode … | head`) as the end of output
/// instead of a panic.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

impl Ctx {
    /// Refuse the base branch where a worker branch is needed.
    ///
    /// Errors: [`Error::BaseBranch`].
    pub fn not_base(&self, branch: &str) -> Result<(), Error> {
        if branch == crate::repo::base_name(&self.repo, &self.cfg) {
            return Err(Error::BaseBranch {
                branch: branch.to_string(),
            });
        }
        Ok(())
    }

    /// Ask the forge (unless `offline`) and gather the one worker on `branch`, printing
    /// warnings on stderr.
    ///
    /// Errors: [`Error::UnknownBranch`] when the branch is nowhere (no local or remote
    /// branch, no worktree, no ledger); gathering errors.
    pub fn one_worker(&self, branch: &str, offline: bool) -> Result<crate::model::Snapshot, Error> {
        self.not_base(branch)?;
        let forge = self.forge_view(offline, Some(branch), false)?;
        let (snap, warnings) =
            crate::snapshot::gather_one(&self.repo, &self.cfg, self.now, branch, forge)?;
        self.ui.warn(&warnings);
        snap.ok_or_else(|| Error::UnknownBranch {
            branch: branch.to_string(),
        })
    }
}

impl Ctx {
    /// Ask the forge for this run (unless `offline`), printing its warnings on stderr: one
    /// listing cut off at the oldest first ledger event of the workers shown (`only`: that
    /// one; `all`: tasks whose branch exists nowhere too), feedback for their open pull
    /// requests ([`crate::snapshot::forge_view`]).
    ///
    /// Errors: [`Error`] when the refs or the ledger cannot be read.
    pub fn forge_view(
        &self,
        offline: bool,
        only: Option<&str>,
        all: bool,
    ) -> Result<crate::forge::View, Error> {
        let (forge, mut warnings) = crate::forge::open_run(&self.repo, &self.cfg.remote, offline);
        let (view, more) =
            crate::snapshot::forge_view(&self.repo, &self.cfg, forge.as_deref(), only, all)?;
        warnings.extend(more);
        self.ui.warn(&warnings);
        Ok(view)
    }
}

/// Ledger the milestones `branches` (every worker branch when empty) carry only in their
/// commits' trailers, before a command writes the ledger (SPEC `milestone`: nothing the
/// hook could not write is lost). A failure is a warning: the command goes on.
pub fn pick_up(ctx: &Ctx, branches: &[String]) {
    if let Err(e) = crate::snapshot::pick_up_milestones(&ctx.repo, &ctx.cfg, branches) {
        ctx.ui.warn(&[format!(
            "cannot ledger milestones from commit trailers: {e}"
        )]);
    }
}

impl Command {
    /// The subcommand's name, as typed (`status`, `record`, …): the command span's field.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Status(_) => "status",
            Command::Classify(_) => "classify",
            Command::Record(_) => "record",
            Command::Log(_) => "log",
            Command::Recover(_) => "recover",
            Command::Verify(_) => "verify",
            Command::Resume(_) => "resume",
            Command::Hook(_) => "hook",
            Command::Sync(_) => "sync",
            Command::Demo(_) => "demo",
            Command::Man(_) => "man",
            Command::Completions(_) => "completions",
        }
    }
}

fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "git_recode=debug",
        _ => "git_recode=trace,gix=debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Each span (the command, gathering, the forge, recover; gix's own with `-vv`) says
    // when it closes and how long it was busy; timestamps only with `-v`, so a plain
    // warning stays one clean line.
    let fmt = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_writer(std::io::stderr);
    let _ = if verbose == 0 {
        fmt.without_time().try_init()
    } else {
        fmt.try_init()
    };
}

fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Map an output write error: a broken pipe is not an error (`git recode log | head`).
pub fn out_err(e: std::io::Error) -> Error {
    Error::Io {
        what: "write to",
        path: "stdout".into(),
        source: e,
    }
}

/// Parse arguments, run the command, print errors; return the exit code.
pub fn main() -> i32 {
    // The post-commit hook runs on every commit: git starting git-recode as the hook's
    // interpreter, or the hook script's `git-recode hook post-commit`, goes straight to
    // it, before argument parsing and logging are set up.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if crate::hook::is_hook_path(&args) || args == ["hook", "post-commit"] {
        return hook::post_commit_hook();
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    init_tracing(cli.verbose);
    for d in &cli.dirs {
        if let Err(e) = std::env::set_current_dir(d) {
            eprintln!("error: cannot change to directory '{}': {e}", d.display());
            eprintln!("hint: -C takes a directory inside a git repository");
            return EXIT_ERROR;
        }
    }
    // The terminal: colour from --color now, refined by git's color.ui in `Ctx::open`.
    let ui = Ui::new(&cli.color);
    let span = tracing::info_span!("command", name = cli.command.name());
    let _entered = span.enter();
    let result = match cli.command {
        Command::Status(a) => status::run(a, &ui),
        Command::Classify(a) => classify::run(a, &ui),
        Command::Record(c) => record::run(c, &ui),
        Command::Log(a) => log::run(a, &ui),
        Command::Recover(a) => recover::run(a, &ui),
        Command::Verify(a) => verify::run(a, &ui),
        Command::Resume(a) => resume::run(a, &ui),
        Command::Hook(c) => hook::run(c, &ui),
        Command::Sync(a) => sync::run(a, &ui),
        Command::Demo(a) => demo::run(a, &ui),
        Command::Man(a) => man::run(a),
        Command::Completions(a) => man::completions(a),
    };
    // SPEC 1.2 "The loop settles": a stale lock moved aside is named in a warning.
    let moved: Vec<String> = crate::lock::take_warnings()
        .iter()
        .map(|m| m.warning())
        .collect();
    ui.warn(&moved);
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => EXIT_OK,
        Err(e) => {
            eprint!("{}", e.render());
            e.exit_code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
