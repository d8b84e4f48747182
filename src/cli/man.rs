//! `git recode man`: the manual, generated from the command definitions.

use std::io::Write;
use std::path::PathBuf;

use clap::CommandFactory;

use crate::cli::{Cli, out_err};
use crate::error::{EXIT_OK, Error};

/// Print the man page (roff), or install it where `man git-recode` and `git help recode` find it
///
/// With --install, the page goes to <prefix>/share/man/man1/git-recode.1, where <prefix>
/// is the directory above the one holding this binary (man finds it for every bin
/// directory on PATH), or to DIR/man1 with --install DIR.
///
/// Example: `git recode man --install && git help recode`
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write the page under a man directory instead of printing it [default: <prefix>/share/man]
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "")]
    pub install: Option<String>,
}

/// The man page of git-recode, its commands included, as roff.
///
/// Errors: [`Error::Io`] on a write failure.
pub fn render() -> Result<Vec<u8>, Error> {
    let cmd = Cli::command().name("git-recode").bin_name("git-recode");
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut buf)
        .map_err(out_err)?;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let _ = writeln!(buf, ".SH \"GIT RECODE {}\"", sub.get_name().to_uppercase());
        let about = sub
            .get_long_about()
            .or(sub.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        for para in about.split("\n\n") {
            let _ = writeln!(
                buf,
                ".PP\n{}",
                para.replace('\\', "\\\\").replace("\n.", "\n\\&.")
            );
        }
        for arg in sub.get_arguments().filter(|a| !a.is_global_set()) {
            let name = match (arg.get_short(), arg.get_long()) {
                (_, Some(l)) => format!("\\-\\-{l}"),
                (Some(s), None) => format!("\\-{s}"),
                _ => format!("<{}>", arg.get_id()),
            };
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            let _ = writeln!(buf, ".TP\n\\fB{name}\\fR\n{}", help.replace('\\', "\\\\"));
        }
    }
    Ok(buf)
}

/// Run `man`.
///
/// Errors: [`Error::Io`].
pub fn run(args: ManArgs) -> Result<i32, Error> {
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
