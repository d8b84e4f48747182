//! Shell completion, both as `git-recode …` and as `git recode …`: `git recode
//! completions <shell>` prints a small script that asks the binary itself for each
//! completion (clap_complete's dynamic engine, `COMPLETE=<shell> git-recode -- <words>`),
//! so subcommands, options and worker branch names always match the binary on `PATH`.
//!
//! - bash (needs bash-completion): `git-recode …` directly, and `_git_recode`, which git's
//!   own completion calls for `git recode …` (loading the file by the name `git-recode`).
//! - zsh: the file `_git-recode` on `$fpath`: `#compdef git-recode`, and zsh's git
//!   completion calls `_git-recode` for `git recode …`.
//! - fish: a `conf.d` file completing `git-recode …` and `git recode …`.

use std::ffi::OsStr;
use std::io::Write;

use clap::CommandFactory;
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};

use crate::app::{EXIT_OK, Error};
use crate::cli::{Cli, out_err};

/// Print shell completions for bash, zsh or fish (subcommands, options, worker branches)
///
/// bash (bash-completion must be installed): `mkdir -p ~/.local/share/bash-completion/completions && git recode completions bash > ~/.local/share/bash-completion/completions/git-recode`
/// (git's own completion then completes `git recode …` too).
/// zsh: `mkdir -p ~/.zfunc && git recode completions zsh > ~/.zfunc/_git-recode`, with
/// `fpath=(~/.zfunc $fpath)` before `compinit` in ~/.zshrc.
/// fish: `mkdir -p ~/.config/fish/conf.d && git recode completions fish > ~/.config/fish/conf.d/git-recode.fish`.
#[derive(clap::Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell
    #[arg(value_parser = ["bash", "zsh", "fish"])]
    pub shell: String,
}

/// The command definition completion runs on: the CLI named `git-recode`, with every
/// `branch`/`branches` argument completing worker branch names ([`worker_branches`]).
pub(crate) fn command() -> clap::Command {
    with_branches(Cli::command().name("git-recode").bin_name("git-recode"))
}

fn with_branches(cmd: clap::Command) -> clap::Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| id == "branch" || id == "branches")
        .collect();
    let mut cmd = cmd;
    for id in ids {
        cmd = cmd.mut_arg(id, |a| a.add(ArgValueCompleter::new(worker_branches)));
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for s in subs {
        cmd = cmd.mut_subcommand(s, with_branches);
    }
    cmd
}

/// Worker branches starting with `current`: local branches and those of `recode.remote`
/// (short names) that match `recode.branchPattern`, from the repository of the current
/// directory. Nothing outside a repository.
pub(crate) fn worker_branches(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    crate::app::worker_branches()
        .into_iter()
        .filter(|b| b.starts_with(current.as_ref()))
        .map(CompletionCandidate::new)
        .collect()
}

/// Answer a completion request (`COMPLETE=<shell>` in the environment) and return true;
/// false for an ordinary run.
pub(crate) fn answer() -> bool {
    if std::env::var_os("COMPLETE").is_none_or(|v| v.is_empty() || v == "0") {
        return false;
    }
    let args = std::env::args_os();
    let cwd = std::env::current_dir().ok();
    match clap_complete::CompleteEnv::with_factory(command)
        .bin("git-recode")
        .completer("git-recode")
        .try_complete(args, cwd.as_deref())
    {
        Ok(done) => done,
        Err(e) => {
            let _ = e.print();
            true
        }
    }
}

const BASH: &str = r#"# git-recode completion for bash (needs bash-completion): `git recode completions bash`.
# Completes `git-recode …`, and `git recode …` through git's own completion (_git_recode).
_git_recode_words() {
    # $1: the index in COMP_WORDS of the word before the subcommand (git-recode, or recode).
    local IFS=$'\013'
    local words=("git-recode" "${COMP_WORDS[@]:$1+1}")
    local cword=$((COMP_CWORD - $1))
    COMPREPLY=( $( _CLAP_IFS="$IFS" _CLAP_COMPLETE_INDEX="$cword" COMPLETE=bash \
        git-recode -- "${words[@]}" 2>/dev/null ) ) || COMPREPLY=()
}
_git_recode_bin() {
    _git_recode_words 0
}
# Called by git's completion for `git recode …` (its own registration adds no space).
_git_recode() {
    _git_recode_words "${__git_cmd_idx:-1}"
    local i
    for i in "${!COMPREPLY[@]}"; do
        case ${COMPREPLY[i]} in *[=/]) ;; *) COMPREPLY[i]+=" " ;; esac
    done
}
complete -o bashdefault -o default -o nosort -F _git_recode_bin git-recode 2>/dev/null ||
    complete -o bashdefault -o default -F _git_recode_bin git-recode
"#;

const ZSH: &str = r#"#compdef git-recode
# git-recode completion for zsh: `git recode completions zsh > <a directory on $fpath>/_git-recode`.
# zsh's git completion calls _git-recode for `git recode …` (words[1] is then `recode`).
_git-recode() {
    local -a args completions
    args=(git-recode "${(@)words[2,-1]}")
    completions=("${(@f)$(_CLAP_IFS=$'\n' _CLAP_COMPLETE_INDEX=$((CURRENT - 1)) COMPLETE=zsh \
        git-recode -- "${args[@]}" 2>/dev/null)}")
    [[ -n $completions ]] && _describe -V 'values' completions
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _git-recode "$@"
else
    compdef _git-recode git-recode
fi
"#;

const FISH: &str = r#"# git-recode completion for fish: `git recode completions fish > ~/.config/fish/conf.d/git-recode.fish`.
# Completes `git-recode …`, and `git recode …` (fish's git completion cannot hand it over:
# fish 3.6 registers custom commands under the wrong name).
function __git_recode_complete
    set -l tokens (commandline --current-process --tokenize --cut-at-cursor)
    set -l i 1
    if test "$tokens[1]" = git
        set i (contains --index -- recode $tokens)
        or return
    end
    COMPLETE=fish git-recode -- git-recode $tokens[(math $i + 1)..-1] (commandline --current-token)
end
complete --keep-order --exclusive --command git-recode --arguments "(__git_recode_complete)"
complete --keep-order --exclusive --command git --condition "__fish_seen_subcommand_from recode" --arguments "(__git_recode_complete)"
"#;

/// Run `completions`: print the script for the shell.
///
/// Errors: [`Error::Io`] on a write failure.
pub(crate) fn completions(args: CompletionsArgs) -> Result<i32, Error> {
    let script = match args.shell.as_str() {
        "bash" => BASH,
        "zsh" => ZSH,
        _ => FISH,
    };
    std::io::stdout()
        .lock()
        .write_all(script.as_bytes())
        .map_err(out_err)?;
    Ok(EXIT_OK)
}
