//! `git recode man`: the manual, generated from the command definitions.

use std::io::Write;
use std::path::PathBuf;

use crate::app::{EXIT_OK, Error};
use crate::cli::out_err;

/// Print the man page (roff), or install it where `man git-recode` and `git help recode` find it
///
/// With --install, the page goes to <prefix>/share/man/man1/git-recode.1, where <prefix>
/// is the directory above the one holding this binary (man finds it for every bin
/// directory on PATH), or to DIR/man1 with --install DIR.
///
/// Example: `git recode man --install && git help recode`
#[derive(clap::Args, Debug)]
pub(crate) struct ManArgs {
    /// Write the page under a man directory instead of printing it [default: <prefix>/share/man]
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "")]
    pub install: Option<String>,
}

/// Text for roff: backslashes and dashes escaped, a line starting with `.` or `'` kept
/// as text.
fn roff(text: &str) -> String {
    text.replace('\\', "\\e")
        .replace('-', "\\-")
        .lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An argument as the synopsis and the option list show it: `--rc <N>`, `-C <path>`,
/// `<branch>`.
fn arg_label(arg: &clap::Arg) -> String {
    let takes = arg.get_action().takes_values();
    let value = arg
        .get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.to_string())
        .unwrap_or_else(|| arg.get_id().to_string().to_uppercase());
    match (arg.get_short(), arg.get_long()) {
        (_, Some(l)) if takes => format!("--{l} <{value}>"),
        (_, Some(l)) => format!("--{l}"),
        (Some(c), None) if takes => format!("-{c} <{value}>"),
        (Some(c), None) => format!("-{c}"),
        (None, None) => format!("<{}>", arg.get_id()),
    }
}

/// One command's section: its synopsis (clap's usage), its description, its options and
/// arguments (globals are in OPTIONS), then its subcommands, recursively.
fn render_command(buf: &mut Vec<u8>, cmd: &clap::Command, path: &str) {
    let path = format!("{path} {}", cmd.get_name());
    let _ = writeln!(buf, ".SH \"{}\"", path.to_uppercase());
    let usage = cmd
        .clone()
        .bin_name(path.clone())
        .render_usage()
        .to_string();
    let usage = usage
        .trim_start_matches("Usage: ")
        .trim()
        .replace("git-recode ", "git recode ");
    for line in usage.lines() {
        let _ = writeln!(buf, ".PP\n\\fB{}\\fR", roff(line.trim()));
    }
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    for para in about.split("\n\n") {
        let _ = writeln!(buf, ".PP\n{}", roff(para));
    }
    for arg in cmd
        .get_arguments()
        .filter(|a| !a.is_global_set() && !a.is_hide_set())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
    {
        let mut help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() && arg.get_action().takes_values() {
            help.push_str(&format!(" (one of: {})", values.join(", ")));
        }
        let _ = writeln!(
            buf,
            ".TP\n\\fB{}\\fR\n{}",
            roff(&arg_label(arg)),
            roff(&help)
        );
    }
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        render_command(buf, sub, &path);
    }
}

/// The man page of git-recode, as roff: name, synopsis, description, global options,
/// one section per command and subcommand (`GIT RECODE RECORD EXIT`: every option), the
/// configuration keys ([`crate::app::CONFIG_KEYS`]), the loop tick, exit codes, environment,
/// and pages that exist (git's).
///
/// Errors: [`Error::Io`] on a write failure.
pub(crate) fn render() -> Result<Vec<u8>, Error> {
    let cmd = crate::cli::complete::command();
    let cmd = {
        let mut c = cmd;
        c.build();
        c
    };
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    man.render_title(&mut buf).map_err(out_err)?;
    man.render_name_section(&mut buf).map_err(out_err)?;
    let _ = writeln!(
        buf,
        ".SH SYNOPSIS\n\\fBgit recode\\fR [\\fB\\-C\\fR \\fIpath\\fR]... [\\fB\\-\\-color\\fR \\fIwhen\\fR] [\\fB\\-v\\fR]... \\fIcommand\\fR [\\fIargs\\fR]\n.br\n\\fBgit\\-recode\\fR [\\fB\\-C\\fR \\fIpath\\fR]... \\fIcommand\\fR [\\fIargs\\fR]"
    );
    man.render_description_section(&mut buf).map_err(out_err)?;
    let _ = writeln!(buf, ".SH OPTIONS");
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let _ = writeln!(
            buf,
            ".TP\n\\fB{}\\fR\n{}",
            roff(&arg_label(arg)),
            roff(&help)
        );
    }
    let _ = writeln!(buf, ".SH COMMANDS");
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        let _ = writeln!(buf, ".TP\n\\fB{}\\fR\n{}", sub.get_name(), roff(&about));
    }
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        render_command(&mut buf, sub, "git recode");
    }
    let _ = writeln!(buf, ".SH CONFIGURATION\nSet with \\fBgit config\\fR.");
    for k in crate::app::CONFIG_KEYS {
        let _ = writeln!(
            buf,
            ".TP\n\\fB{}\\fR\n{} [default: {}]",
            roff(k.name),
            roff(k.meaning),
            roff(k.default)
        );
    }
    let _ = writeln!(
        buf,
        ".SH \"A LOOP TICK\"\nRun it from bash every few minutes, after \\fBgit recode hook install\\fR:\n.PP\n.nf\n{}\n.fi",
        roff(crate::app::LOOP_TICK.trim_end())
    );
    let _ = writeln!(
        buf,
        ".SH \"EXIT STATUS\"\n0 done, 1 error, 2 bad usage, 3 refused for safety or capped (needs a human).\n.SH ENVIRONMENT\n.TP\n\\fBRECODE_NOW\\fR\nan RFC 3339 time that replaces the clock\n.TP\n\\fBGH_TOKEN\\fR, \\fBGITHUB_TOKEN\\fR, \\fBGH_HOST\\fR\nGitHub: its token (either), and the host of a GitHub Enterprise\n.TP\n\\fBGITLAB_TOKEN\\fR\nGitLab (gitlab.com or self-managed): its token, sent as PRIVATE\\-TOKEN\n.TP\n\\fBGITEA_TOKEN\\fR, \\fBFORGEJO_TOKEN\\fR\nGitea or Forgejo (Codeberg or self-hosted): its token (either)\n.TP\n\\fBRECODE_FORGE_API\\fR, \\fBRECODE_GITHUB_API\\fR\nthe API base URL of whichever forge (the first set wins); a self-hosted instance's root gets its API path added (/api/v4 GitLab, /api/v1 Gitea)\n.TP\n\\fBRECODE_FORGE_MAX_WAIT\\fR\nthe longest wait before one retry of a forge request, in seconds (default 20)\n.TP\n\\fBNO_COLOR\\fR\nno colour\n.TP\n\\fBRUST_LOG\\fR\nlogging on stderr\n.SH \"SEE ALSO\"\n\\fBgit\\fR(1), \\fBgit\\-notes\\fR(1), \\fBgit\\-worktree\\fR(1), \\fBgit\\-config\\fR(1)"
    );
    Ok(buf)
}

/// Run `man`.
///
/// Errors: [`Error::Io`].
pub(crate) fn run(args: ManArgs) -> Result<i32, Error> {
    let page = render()?;
    match args.install {
        None => {
            std::io::stdout().lock().write_all(&page).map_err(out_err)?;
        }
        Some(dir) => {
            let root = if dir.is_empty() {
                let exe = std::env::current_exe().map_err(|e| Error::Program {
                    what: "cannot find this program",
                    why: e.to_string(),
                })?;
                exe.parent()
                    .and_then(|bin| bin.parent())
                    .map(|prefix| prefix.join("share").join("man"))
                    .unwrap_or_else(|| PathBuf::from("man"))
            } else {
                PathBuf::from(dir)
            };
            let target = root.join("man1").join("git-recode.1");
            let io = |source| Error::Io {
                what: "write the man page to",
                path: target.display().to_string(),
                source,
            };
            std::fs::create_dir_all(root.join("man1")).map_err(io)?;
            std::fs::write(&target, &page).map_err(|source| Error::Io {
                what: "write the man page to",
                path: target.display().to_string(),
                source,
            })?;
            crate::say!("installed {}", target.display());
        }
    }
    Ok(EXIT_OK)
}
