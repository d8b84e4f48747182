//! Completion in real shells: bash with bash-completion and git's own
//! completion, zsh with its git completion (driven in a pty), and fish, each installed the
//! way the README says, complete subcommands, options and worker branch names as
//! `git recode …` and as `git-recode …`.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::newcomer::with_agent;

const LINES: &[&str] = &[
    "git recode status --j",
    "git recode record ",
    "git recode classify iss",
    "git-recode log --j",
    "git-recode resume issue-2",
];

/// What each line of [`LINES`] must offer.
const WANT: &[&str] = &[
    "git recode status --j=>--json",
    "git recode record =>spawn|exit|gate|unblock|clear|help|-C|--color|--verbose|--help|--version",
    "git recode classify iss=>issue-1-w|issue-2-w",
    "git-recode log --j=>--json",
    "git-recode resume issue-2=>issue-2-w",
];

fn need(shell: &str) {
    let found = std::process::Command::new(shell)
        .arg("-c")
        .arg("true")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{shell} is needed by this test: apt-get install -y bash-completion zsh fish (.ci/run does)"
    );
}

/// A repository with worker branches `issue-1-w` and `issue-2-w` (and a non-worker).
fn repo(env: &TestEnv) -> PathBuf {
    let repo = env.repo("r");
    for b in ["issue-1-w", "issue-2-w", "notes-draft"] {
        env.git(&repo, &["branch", b]);
    }
    repo
}

/// `git recode completions <shell>` written to `file` (its directory created first, as
/// the README's install line does).
fn install(env: &TestEnv, repo: &Path, shell: &str, file: &Path) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let script = env.ok(repo, &["completions", shell]);
    std::fs::write(file, script).unwrap();
}

fn run(env: &TestEnv, repo: &Path, program: &str, args: &[&str]) -> String {
    let bin = env.root().join("no-agent");
    std::fs::create_dir_all(&bin).unwrap();
    let out = with_agent(env, repo, program, &bin)
        .args(args)
        .args(LINES)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn bash_completes_both_forms() {
    need("bash");
    assert!(
        Path::new("/usr/share/bash-completion/bash_completion").is_file(),
        "bash-completion is needed: apt-get install -y bash-completion"
    );
    let env = TestEnv::new();
    let repo = repo(&env);
    install(
        &env,
        &repo,
        "bash",
        &env.home
            .join(".local/share/bash-completion/completions/git-recode"),
    );
    let got = run(
        &env,
        &repo,
        "bash",
        &["--norc", "--noprofile", &data("complete-bash.sh")],
    );
    assert_eq!(got.lines().collect::<Vec<_>>(), WANT);
}

#[test]
fn zsh_completes_both_forms() {
    need("zsh");
    let env = TestEnv::new();
    let repo = repo(&env);
    let zfunc = env.home.join(".zfunc");
    install(&env, &repo, "zsh", &zfunc.join("_git-recode"));
    let bin = env.root().join("no-agent");
    std::fs::create_dir_all(&bin).unwrap();
    let out = with_agent(&env, &repo, "timeout", &bin)
        .env("ZFUNC", &zfunc)
        .args(["60", "zsh", "-f", &data("complete-zsh.zsh")])
        .args(LINES)
        .output()
        .unwrap();
    let got = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        got.lines().collect::<Vec<_>>(),
        WANT,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fish_completes_both_forms() {
    need("fish");
    let env = TestEnv::new();
    let repo = repo(&env);
    install(
        &env,
        &repo,
        "fish",
        &env.home.join(".config/fish/conf.d/git-recode.fish"),
    );
    let script = r#"for l in $argv; echo "$l=>"(complete -C "$l" | string split -f1 \t | string join "|"); end"#;
    let got = run(&env, &repo, "fish", &["-c", script]);
    assert_eq!(got.lines().collect::<Vec<_>>(), WANT);
}
