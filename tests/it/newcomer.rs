//! A newcomer's first hour: the `--help` loop tick run exactly as printed,
//! `examples/loop.sh` run with a stand-in agent, README and docs links, errors that name
//! what is wrong, and wording.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;

/// A stand-in `claude` on PATH: it answers `--version`; else it reads all of its stdin (as
/// `claude -p` does when stdin is a pipe), commits one file in its directory, and prints a
/// final message.
pub fn stand_in_agent(env: &TestEnv) -> PathBuf {
    let bin = env.root().join("agent-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("claude");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         [ \"$1\" = --version ] && { echo '2.0.0 (Claude Code stand-in)'; exit 0; }\n\
         cat >/dev/null\n\
         b=$(git rev-parse --abbrev-ref HEAD)\n\
         echo \"work of $b\" >> agent-work.txt\n\
         git add agent-work.txt && git commit -q -m \"agent: $b\" || exit 1\n\
         echo \"done: committed on $b\"\n",
    )
    .unwrap();
    make_executable(&script);
    bin
}

pub fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// PATH with the stand-in agent and the `git-recode` binary first (so `git recode` works).
pub fn path_with(bin: &Path) -> std::ffi::OsString {
    let exe = assert_cmd::cargo::cargo_bin("git-recode");
    let mut dirs = vec![bin.to_path_buf(), exe.parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// A repository with `n` resumable workers `issue-<i>-w` (one commit ahead, clean
/// worktree, an attempt that exited with rc 1).
pub fn resumable(env: &TestEnv, n: u32) -> PathBuf {
    let repo = env.repo("r");
    for i in 1..=n {
        let wt = env.root().join(format!("wt{i}"));
        let b = format!("issue-{i}-w");
        env.git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &b,
                wt.to_str().unwrap(),
                "main",
            ],
        );
        std::fs::write(wt.join(format!("f{i}")), "a\n").unwrap();
        env.git(&wt, &["add", "."]);
        env.git(&wt, &["commit", "-q", "-m", &format!("work {i}")]);
        env.ok(
            &repo,
            &["record", "spawn", &b, "--session-id", &format!("s{i}")],
        );
        let msg = env.root().join("msg");
        std::fs::write(&msg, "error: something broke\n").unwrap();
        env.ok(
            &repo,
            &[
                "record",
                "exit",
                &b,
                "--rc",
                "1",
                "--message-file",
                msg.to_str().unwrap(),
            ],
        );
    }
    repo
}

/// `program` in `dir` with the test environment and `bin` (the stand-in agent) and
/// `git-recode` first on PATH.
pub fn with_agent(env: &TestEnv, dir: &Path, program: &str, bin: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.env_clear();
    for (k, v) in env.cmd(dir).get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.env("PATH", path_with(bin))
        .env("TMPDIR", env.root())
        .current_dir(dir)
        .stdin(std::process::Stdio::null());
    cmd
}

/// `(kind, branch, message)` of every ledger event, in ledger order.
pub fn events(env: &TestEnv, repo: &Path) -> Vec<(String, String, String)> {
    env.ok(repo, &["log", "--json"])
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
            (s("kind"), s("branch"), s("message"))
        })
        .collect()
}

/// The loop tick of `git-recode --help`: the indented lines after "A loop tick".
fn help_loop_tick(env: &TestEnv, repo: &Path) -> String {
    let help = env.ok(repo, &["--help"]);
    let start = help.find("A loop tick").expect("--help shows a loop tick");
    help[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| format!("{}\n", &l[2..]))
        .collect()
}

#[test]
fn help_loop_tick_runs_as_printed_and_resumes_every_worker() {
    let env = TestEnv::new();
    let repo = resumable(&env, 2);
    let bin = stand_in_agent(&env);
    let tick = help_loop_tick(&env, &repo);
    assert!(tick.contains("--message-file"), "{tick}");
    let script = env.root().join("tick.sh");
    std::fs::write(&script, &tick).unwrap();
    let run = with_agent(&env, &repo, "bash", &bin)
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "the tick failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got: Vec<(String, String, String)> = events(&env, &repo)
        .into_iter()
        .filter(|(k, _, _)| k == "resume" || k == "exit")
        .map(|(k, b, m)| (k, b, m.trim_end().to_string()))
        .collect();
    let want = |k: &str, b: &str, m: &str| (k.to_string(), b.to_string(), m.to_string());
    assert_eq!(
        got,
        vec![
            want("exit", "issue-1-w", "error: something broke"),
            want("resume", "issue-1-w", ""),
            want("exit", "issue-1-w", "done: committed on issue-1-w"),
            want("exit", "issue-2-w", "error: something broke"),
            want("resume", "issue-2-w", ""),
            want("exit", "issue-2-w", "done: committed on issue-2-w"),
        ]
    );
    for i in 1..=2 {
        assert_eq!(
            env.git(
                &repo,
                &["log", "-1", "--format=%s", &format!("issue-{i}-w")]
            ),
            format!("agent: issue-{i}-w")
        );
    }
}

#[test]
fn a_branch_that_exists_nowhere_names_the_closest_workers() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-1-empty"]);
    env.git(&repo, &["branch", "issue-12-parser"]);
    env.ok(&repo, &["record", "spawn", "issue-1-empty"]);
    // Every command that takes a branch answers alike: one snapshot, checked on each.
    insta::allow_duplicates! {
        for args in [
            &["classify", "issue-1"][..],
            &["resume", "issue-1", "--dry-run"][..],
            &["record", "exit", "issue-1", "--rc", "0"][..],
            &["record", "gate", "issue-1", "--passed"][..],
            &["record", "clear", "issue-1"][..],
        ] {
            insta::with_settings!({ description => format!("{args:?}") }, {
                insta::assert_snapshot!(env.run(&repo, args), @"
                --- stderr ---
                error: no worker or branch named 'issue-1'; the closest worker branches: issue-1-empty
                hint: did you mean 'issue-1-empty'? (`git recode status --all` lists every worker)
                [exit status: 1]
                ");
            });
        }
    }
    // A typo is near its branch by edit distance.
    assert!(
        env.run(&repo, &["classify", "issue-12-parsr"])
            .starts_with("--- stderr ---\nerror: no worker or branch named 'issue-12-parsr'; the closest worker branches: issue-12-parser\n")
    );
    // Nothing was ledgered for the name that exists nowhere.
    assert!(
        events(&env, &repo)
            .iter()
            .all(|(_, b, _)| b == "issue-1-empty")
    );
    // A spawn may come before the branch exists (SPEC `record spawn`).
    env.ok(&repo, &["record", "spawn", "issue-1"]);
    assert_eq!(
        env.run(&repo, &["classify", "issue-1"]).lines().last(),
        Some("[exit status: 0]")
    );
}

#[test]
fn config_values_are_checked_where_read() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let cases = [
        (
            "recode.base",
            "nope",
            "error: config recode.base = 'nope' is invalid: no branch 'nope' here nor on 'origin' (set it to the branch work merges into, or unset it)",
        ),
        (
            "recode.stallAfter",
            "10",
            "error: config recode.stallAfter = '10' is invalid: '10' has no unit: a duration is a number followed by s, m, h or d, like 10m",
        ),
        (
            "recode.maxAttempts",
            "0",
            "error: config recode.maxAttempts = '0' is invalid: expected a whole number from 1 to 1000 (0 would escalate every worker)",
        ),
        (
            "recode.maxAttempts",
            "1000000000000",
            "error: config recode.maxAttempts = '1000000000000' is invalid: expected a whole number from 1 to 1000 (a cap nobody reaches is no cap)",
        ),
        (
            "recode.networkTimeout",
            "60",
            "error: config recode.networkTimeout = '60' is invalid: '60' has no unit: a duration is a number followed by s, m, h or d, like 60m",
        ),
    ];
    for (key, value, want) in cases {
        env.git(&repo, &["config", key, value]);
        assert_eq!(
            env.run(&repo, &["status"]),
            format!(
                "--- stderr ---\n{want}\nhint: fix the value with `git config <key> <value>`\n[exit status: 1]\n"
            ),
            "{key}={value}"
        );
        env.git(&repo, &["config", "--unset", key]);
    }
    env.git(&repo, &["config", "recode.base", "main"]);
    env.git(&repo, &["config", "recode.stallAfter", "10m"]);
    env.git(&repo, &["config", "recode.maxAttempts", "1000"]);
    env.ok(&repo, &["status"]);
}

#[test]
fn wording_a_newcomer_reads() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    // log on a repository with no ledger says so.
    insta::assert_snapshot!(env.run(&repo, &["log"]), @"
    no ledger events yet (`git recode record spawn <branch>` ledgers an attempt's start)
    --- stderr ---
    [exit status: 0]
    ");
    assert_eq!(env.ok(&repo, &["log", "--json"]), "");
    // recover with no arguments names --all.
    let out = env.run(&repo, &["recover"]);
    insta::assert_snapshot!(out, @"
    --- stderr ---
    error: name the workers' branches to recover, or --all for every worker (`git recode recover --all`)
    [exit status: 2]
    ");
    // log's text view quotes a message, so the next field stands apart.
    let msg = env.root().join("m");
    std::fs::write(&msg, "rate limit hit\n").unwrap();
    env.ok(&repo, &["record", "spawn", "issue-3", "--cwd", "."]);
    env.ok(
        &repo,
        &[
            "record",
            "exit",
            "issue-3",
            "--rc",
            "1",
            "--message-file",
            msg.to_str().unwrap(),
        ],
    );
    let log = env.ok(&repo, &["log", "issue-3"]);
    let exit = log.lines().find(|l| l.contains(" exit ")).unwrap();
    assert!(
        exit.contains("message=\"rate limit hit\" outcome="),
        "{exit}"
    );
    // A WIP commit of one file says "1 file".
    let wt = env.root().join("wt5");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-5-x",
            wt.to_str().unwrap(),
            "main",
        ],
    );
    std::fs::write(wt.join("new.txt"), "x\n").unwrap();
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", crate::common::LATER)
        .args(["recover", "issue-5-x"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        env.git(&repo, &["log", "-1", "--format=%s", "issue-5-x"]),
        "wip: recode snapshot (1 file)"
    );
}

/// Every command path of the CLI (`record exit`, `hook install`, …), from `--help` of
/// each level, with the long options its help lists.
fn commands(env: &TestEnv, dir: &Path, path: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut args: Vec<&str> = path.to_vec();
    args.push("--help");
    let help = env.ok(dir, &args);
    let options: Vec<String> = help
        .lines()
        // Option lines are indented less than their descriptions (2 or 6 spaces, not 10).
        .filter(|l| l.len() - l.trim_start().len() < 8 && l.trim_start().starts_with('-'))
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("-C ").map(|_| "").unwrap_or(l);
            let word = l.split([' ', ',']).find(|w| w.starts_with("--"))?;
            Some(word.to_string())
        })
        .filter(|o| o != "--help" && o != "--version")
        .collect();
    let mut out = vec![(path.join(" "), options)];
    if let Some(start) = help.find("Commands:\n") {
        let subs: Vec<String> = help[start + 10..]
            .lines()
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .filter(|s| s != "help")
            .collect();
        for s in subs {
            let mut p = path.to_vec();
            p.push(&s);
            out.extend(commands(env, dir, &p));
        }
    }
    out
}

#[test]
fn the_man_page_is_complete_and_git_help_finds_it_after_install() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let page = env.ok(&repo, &["man"]);
    let all = commands(&env, &repo, &[]);
    assert!(all.iter().any(|(p, _)| p == "record exit"), "{all:?}");
    assert!(all.iter().any(|(p, _)| p == "hook install"), "{all:?}");
    assert!(all.iter().any(|(p, _)| p == "doctor"), "{all:?}");
    let globals = all[0].1.clone();
    for (path, options) in &all {
        if path.is_empty() {
            continue;
        }
        let options = options.iter().filter(|o| !globals.contains(o));
        let header = format!(".SH \"GIT RECODE {}\"", path.to_uppercase());
        let start = page
            .find(&header)
            .unwrap_or_else(|| panic!("no section {header}"));
        let section = &page[start + header.len()..];
        let section = &section[..section.find(".SH ").unwrap_or(section.len())];
        for o in options {
            let roff = o.replace('-', "\\-");
            assert!(
                section.contains(&format!("\\fB{roff}")),
                "{path}: {o} is not in its section"
            );
        }
    }
    assert!(
        !page.contains("[\\fB\\-C \\fR]"),
        "the synopsis shows [-C ]"
    );
    assert!(
        !page.contains("git\\-recode\\-"),
        "the page names pages that do not exist"
    );
    assert!(page.contains(".SH \"SEE ALSO\"\n\\fBgit\\fR(1), \\fBgit\\-notes\\fR(1), \\fBgit\\-worktree\\fR(1), \\fBgit\\-config\\fR(1)\n"));
    for k in [
        "recode.networkTimeout",
        "recode.worktreeDir",
        "recode.agentConfigDirs",
    ] {
        assert!(page.contains(&format!("\\fB{}\\fR", k)), "{k}");
    }

    // As after `cargo install`: the binary in <prefix>/bin, then `man --install`; git's
    // `git recode --help` runs `man git-recode`, which finds <prefix>/share/man.
    let prefix = env.root().join("prefix");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    let exe = prefix.join("bin/git-recode");
    crate::common::install_binary(&exe);
    let path = std::env::join_paths(std::iter::once(prefix.join("bin")).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let git_help = || {
        env.git_cmd(&repo)
            .env("PATH", &path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .env_remove("MANPATH")
            .args(["recode", "--help"])
            .output()
            .unwrap()
    };
    // A binary just copied may still be open for writing in a child another test thread
    // forked meanwhile (ETXTBSY): try again for a moment.
    let out = (0..50)
        .find_map(|_| {
            match std::process::Command::new(&exe)
                .args(["man", "--install"])
                .env("HOME", &env.home)
                .output()
            {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    None
                }
                r => Some(r.unwrap()),
            }
        })
        .expect("the copied binary stayed busy");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "installed {}\n",
            prefix.join("share/man/man1/git-recode.1").display()
        )
    );
    let out = git_help();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("GIT RECODE RECORD EXIT"), "{text}");
}

#[test]
fn the_readme_loop_script_runs() {
    let env = TestEnv::new();
    let repo = resumable(&env, 1);
    let bin = stand_in_agent(&env);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/loop.sh");
    let run = with_agent(&env, &repo, "bash", &bin)
        .arg(&script)
        .args(["--once", "3"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "loop.sh failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Only resume's note of the attempt reaches stderr: no step of the loop failed. (A
    // stand-in agent may end before `record spawn --pid $!` runs: that pid is named once.)
    let stderr = String::from_utf8_lossy(&run.stderr);
    let mut lines = stderr.lines();
    assert_eq!(
        lines.next(),
        Some("# attempt 2 of 3, session mode: resuming session s1"),
        "{stderr}"
    );
    for l in lines {
        assert!(
            l.starts_with("warning: no process ")
                && l.ends_with(" on this host: its pid is recorded but never taken as alive"),
            "{stderr}"
        );
    }
    // The agents run in the background: the next tick reaps them once they ended.
    let state = repo.join(".git/recode-loop");
    for _ in 0..600 {
        if ["1", "3"]
            .iter()
            .all(|t| state.join(format!("{t}.rc")).exists())
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let run = with_agent(&env, &repo, "bash", &bin)
        .arg(&script)
        .args(["--once", "3"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let got: Vec<(String, String, String)> = events(&env, &repo)
        .into_iter()
        .map(|(k, b, m)| (k, b, m.trim_end().to_string()))
        .filter(|(k, _, _)| matches!(k.as_str(), "spawn" | "resume" | "exit"))
        .collect();
    let want = |k: &str, b: &str, m: &str| (k.to_string(), b.to_string(), m.to_string());
    for w in [
        want("exit", "issue-1-w", "done: committed on issue-1-w"),
        want("exit", "issue-1-w", "error: something broke"),
        want("exit", "issue-3", "done: committed on issue-3"),
        want("resume", "issue-1-w", ""),
        want("spawn", "issue-1-w", ""),
    ] {
        assert!(got.contains(&w), "{w:?} in {got:#?}");
    }
    assert!(
        got.iter().any(|(k, b, _)| k == "spawn" && b == "issue-3"),
        "{got:#?}"
    );
    // The new worker's worktree is where recode.worktreeDir's default puts it, and the
    // agent committed there.
    let wt = env.root().join("r.worktrees/issue-3");
    assert_eq!(
        env.git(&wt, &["log", "-1", "--format=%s"]),
        "agent: issue-3"
    );
    // Its spawn recorded the agent's pid and directory.
    let spawn = env
        .ok(&repo, &["log", "issue-3", "--json"])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["kind"] == "spawn")
        .unwrap();
    assert!(spawn["pid"].as_u64().is_some_and(|p| p > 1), "{spawn}");
    assert_eq!(spawn["cwd"], wt.display().to_string());
}

/// Every relative link target (`](path)`, `](path#anchor)`) in a Markdown text.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].trim();
        let path = target.split('#').next().unwrap_or("");
        if !path.is_empty() && !path.contains("://") && !path.starts_with("mailto:") {
            out.push(path.to_string());
        }
        rest = &rest[end..];
    }
    out
}

#[test]
fn readme_and_docs_links_resolve_inside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            files.push(e.path());
        }
    }
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for link in relative_links(&text) {
            let target = f.parent().unwrap().join(&link);
            let resolved = target
                .canonicalize()
                .unwrap_or_else(|_| panic!("{}: the link {link} resolves to nothing", f.display()));
            assert!(
                resolved.starts_with(&root),
                "{}: the link {link} leaves the repository (a clone would not have it)",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} links checked");
    // The README's quick start keeps the two commands CI runs.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("\ncargo run --locked -- demo "));
    assert!(readme.contains("\ncargo test --locked "));
    assert!(!readme.contains("SPEC.md"));
    // The README's tick is the one `--help` prints (and the help test runs).
    let tick = git_recode::app::LOOP_TICK;
    let in_readme: String = tick.lines().map(|l| format!("   {}\n", &l[2..])).collect();
    assert!(
        readme.contains(&in_readme),
        "the README's tick differs from --help's"
    );
    // Each docs/*.md named in the README's "More" exists (checked above) and the
    // implementation notes and benchmark tables live in docs/, not in the README.
    assert!(readme.contains("## More\n"));
    assert!(!readme.contains("| worktrees × 5,000 files |"));
    assert!(!readme.contains("## Choices where"));
    assert!(
        readme.lines().count() < 250,
        "the README grew past a first read"
    );
}
