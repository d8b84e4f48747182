//! The command line: one file per command; this dispatcher is one line per arm.
// Doc comments of the argument structs are the --help texts (`<path>`, `<prefix>`), not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::app::{self, EXIT_ERROR, EXIT_OK, Error};

pub(crate) mod classify;
pub(crate) mod complete;
pub(crate) mod demo;
pub(crate) mod doctor;
pub(crate) mod help;
pub(crate) mod hook;
pub(crate) mod log;
pub(crate) mod man;
pub(crate) mod record;
pub(crate) mod recover;
pub(crate) mod report;
pub(crate) mod resume;
pub(crate) mod status;
pub(crate) mod sync;
pub(crate) mod ui;
pub(crate) mod verify;

/// `println!` that treats a closed stdout (`git recode … | head`) as the end of output
/// instead of a panic.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}
pub(crate) use ui::Ui;

/// The version and the commit the binary was built from: `0.1.0 (abc123def456)`.
pub(crate) const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("GIT_RECODE_COMMIT"),
    ")"
);

pub(crate) use help::long_after;

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
    after_help = "Configuration: git config recode.* (`git-recode --help` lists every key and a loop tick).\n`git recode --help` opens the manual once `git recode man --install` has put it where man finds it.",
    after_long_help = long_after()
)]
pub(crate) struct Cli {
    /// Run as if started in <path> (like git's -C; may be repeated)
    #[arg(short = 'C', global = true, value_name = "path")]
    pub dirs: Vec<PathBuf>,
    /// When to colour human output: auto (a terminal, unless NO_COLOR or color.ui=false; CLICOLOR_FORCE forces it), always, never
    #[arg(long, global = true, value_name = "when", value_enum, default_value_t = clap::ColorChoice::Auto)]
    pub color: clap::ColorChoice,
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
pub(crate) enum Command {
    Status(status::StatusArgs),
    Classify(classify::ClassifyArgs),
    /// Ledger an event: spawn, exit, gate, unblock, clear
    #[command(subcommand)]
    Record(record::RecordCommand),
    Recover(recover::RecoverArgs),
    Resume(resume::ResumeArgs),
    Verify(verify::VerifyArgs),
    Log(log::LogArgs),
    Report(report::ReportArgs),
    Sync(sync::SyncArgs),
    /// The post-commit milestone hook
    #[command(subcommand)]
    Hook(hook::HookCommand),
    Demo(demo::DemoArgs),
    Doctor(doctor::DoctorArgs),
    Man(man::ManArgs),
    Completions(complete::CompletionsArgs),
}

impl Command {
    /// The subcommand's name, as typed (`status`, `record`, …): the command span's field.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::Status(_) => "status",
            Command::Classify(_) => "classify",
            Command::Record(_) => "record",
            Command::Log(_) => "log",
            Command::Report(_) => "report",
            Command::Recover(_) => "recover",
            Command::Verify(_) => "verify",
            Command::Resume(_) => "resume",
            Command::Hook(_) => "hook",
            Command::Sync(_) => "sync",
            Command::Demo(_) => "demo",
            Command::Doctor(_) => "doctor",
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
        // Every line redacted (SPEC 1.2: no forge token in any output, `-vv` included).
        .with_writer(|| crate::render::RedactedWriter(std::io::stderr()));
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
pub(crate) fn out_err(e: std::io::Error) -> Error {
    Error::Io {
        what: "write to",
        path: "stdout".into(),
        source: e,
    }
}

/// Parse arguments, run the command, print errors; return the exit code.
pub(crate) fn main() -> i32 {
    // The post-commit hook runs on every commit: git starting git-recode as the hook's
    // interpreter, or the hook script's `git-recode hook post-commit`, goes straight to
    // it, before argument parsing and logging are set up.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if app::is_hook_path(&args) || args == ["hook", "post-commit"] {
        return hook::post_commit_hook();
    }
    // `COMPLETE=<shell> git-recode -- <words>`: the completion scripts asking.
    if complete::answer() {
        return EXIT_OK;
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
    // The terminal: colour from --color now, refined by git's color.ui once a session opens.
    let ui = Ui::new(cli.color);
    let span = tracing::info_span!("command", name = cli.command.name());
    let _entered = span.enter();
    let result = match cli.command {
        Command::Status(a) => status::run(a, &ui),
        Command::Classify(a) => classify::run(a, &ui),
        Command::Record(c) => record::run(c, &ui),
        Command::Log(a) => log::run(a, &ui),
        Command::Report(a) => report::run(a, &ui),
        Command::Recover(a) => recover::run(a, &ui),
        Command::Verify(a) => verify::run(a, &ui),
        Command::Resume(a) => resume::run(a, &ui),
        Command::Hook(c) => hook::run(c, &ui),
        Command::Sync(a) => sync::run(a, &ui),
        Command::Demo(a) => demo::run(a, &ui),
        Command::Doctor(a) => doctor::run(a, &ui),
        Command::Man(a) => man::run(a),
        Command::Completions(a) => complete::completions(a),
    };
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => EXIT_OK,
        Err(e) => {
            // Through a screen: an error quoting a branch, a reason or a forge's message
            // shows every control character escaped (SPEC 1.2 "Untrusted input stays out").
            use std::io::Write as _;
            let mut err = crate::render::Screen::new(
                std::io::stderr().lock(),
                crate::render::Style::default(),
            );
            let _ = write!(err, "{}", crate::render::redact(&e.render()));
            let _ = err.flush();
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
