//! The command line: one file per command; this dispatcher is one line per arm.

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::error::{EXIT_ERROR, EXIT_OK, Error};

pub mod classify;
pub mod demo;
pub mod hook;
pub mod log;
pub mod record;
pub mod recover;
pub mod resume;
pub mod status;
pub mod sync;
pub mod verify;

/// Recover the work of coding-agent workers that die, stall or claim success they did not reach
#[derive(Parser, Debug)]
#[command(
    name = "git-recode",
    bin_name = "git recode",
    version,
    propagate_version = true
)]
pub struct Cli {
    /// Run as if started in <path> (like git's -C; may be repeated)
    #[arg(short = 'C', global = true, value_name = "path")]
    pub dirs: Vec<PathBuf>,
    /// Log more to stderr (-v debug, -vv trace; RUST_LOG also works)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The command
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show every worker: liveness, state and the action a loop should take
    Status(status::StatusArgs),
    /// Show one worker with the evidence for its state
    Classify(classify::ClassifyArgs),
    /// Ledger an event: spawn, exit, gate, unblock, clear
    #[command(subcommand)]
    Record(record::RecordCommand),
    /// Carry out the mechanical actions: delete, publish, wip-commit, escalate
    Recover(recover::RecoverArgs),
    /// Write the resume prompt and the command that continues the agent's session
    Resume(resume::ResumeArgs),
    /// Ask the forge whether the last claimed outcome holds
    Verify(verify::VerifyArgs),
    /// Show the ledger of one task, or of all tasks, in ledger order
    Log(log::LogArgs),
    /// Fetch, union-merge and push the ledger with a remote
    Sync(sync::SyncArgs),
    /// The post-commit milestone hook
    #[command(subcommand)]
    Hook(hook::HookCommand),
    /// Build a throwaway repository full of dead workers and show what git-recode sees
    Demo(demo::DemoArgs),
}

/// What every command needs: the repository, its configuration and the clock.
pub struct Ctx {
    /// The repository (opened from the current directory, after `-C`).
    pub repo: gix::Repository,
    /// `recode.*` configuration.
    pub cfg: Config,
    /// The clock (`RECODE_NOW`).
    pub now: jiff::Timestamp,
}

impl Ctx {
    /// Open the repository in the current directory.
    ///
    /// Errors: [`Error::Repo`], [`Error::Config`], [`Error::Clock`].
    pub fn open() -> Result<Ctx, Error> {
        let now = crate::clock::now()?;
        let repo = crate::repo::open(None)?;
        let cfg = Config::load(&repo)?;
        Ok(Ctx { repo, cfg, now })
    }
}

/// Print warnings once each, on stderr.
pub fn warn_all(warnings: &[String]) {
    let mut err = std::io::stderr().lock();
    for w in warnings {
        let _ = writeln!(err, "warning: {w}");
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
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .try_init();
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
            return EXIT_ERROR;
        }
    }
    let result = match cli.command {
        Command::Status(a) => status::run(a),
        Command::Classify(a) => classify::run(a),
        Command::Record(c) => record::run(c),
        Command::Log(a) => log::run(a),
        Command::Recover(a) => recover::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Resume(a) => resume::run(a),
        Command::Hook(c) => hook::run(c),
        Command::Sync(a) => sync::run(a),
        Command::Demo(a) => demo::run(a),
    };
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
