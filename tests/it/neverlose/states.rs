//! Generators of the states of several branches, secrets and shallow clones (SPEC 1.2 "Never lose work: more states",
//! "Several branches of one task") for the never-lose harness, each with its variants:
//!
//! - submodules holding work: dirty, with local-only commits, nested in a subdirectory,
//!   two of them (each dirty or local-only);
//! - three branches of one task, one of them live (a real process as its pid);
//! - a branch deleted under its worktree (unborn HEAD), with and without the HEAD reflog;
//! - oversize untracked files: over `recode.wipMaxFileSize` (64k in a trial), or under it
//!   but refused by the origin for size (a pre-receive hook in GitHub's words);
//! - a shallow repository (the `shallow` file naming main's first commit after `base0`:
//!   no worker meets the base in the available history).
//!
//! What each adds to the invariants is in [`Extra`], checked by [`Extra::check`].

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::OnceLock;

use super::{Rng, Trial};
use crate::common::TestEnv;

/// What the round-3 states add to the invariants.
#[derive(Default)]
pub(super) struct Extra {
    /// Live agents' processes (killed when the trial ends).
    pub agents: Vec<Child>,
    /// Live workers: (worktree, HEAD before): never removed, never committed.
    pub live: Vec<(PathBuf, String)>,
    /// Branches deleted under their worktrees: (worktree, the agent's tip): that commit is
    /// never lost (restored to a ref, or still in the worktree's reflog or object store).
    pub unborn: Vec<(PathBuf, String)>,
}

impl Drop for Extra {
    fn drop(&mut self) {
        for a in &mut self.agents {
            let _ = a.kill();
            let _ = a.wait();
        }
    }
}

/// A bare repository with one commit, shared by every trial of the process as the origin
/// of their submodules (cloned from, never written to).
fn lib_origin() -> &'static Path {
    static LIB: OnceLock<(TestEnv, PathBuf)> = OnceLock::new();
    &LIB.get_or_init(|| {
        let env = TestEnv::new();
        let root = env.root();
        env.git(&root, &["init", "-q", "--bare", "-b", "main", "lib.git"]);
        env.git(&root, &["clone", "-q", "lib.git", "libsrc"]);
        let src = root.join("libsrc");
        std::fs::write(src.join("lib.c"), "v1\n").unwrap();
        env.git(&src, &["add", "."]);
        env.git(&src, &["commit", "-q", "-m", "lib"]);
        env.git(&src, &["push", "-q", "origin", "HEAD:main"]);
        let lib = root.join("lib.git");
        (env, lib)
    })
    .1
}

impl Trial {
    /// Submodules in the worker's worktree at `wt`, committed on its branch, then holding
    /// work: variant 0 dirty, 1 a local-only commit, 2 nested at `deps/sub/lib`, 3 two.
    pub(super) fn add_submodules(&self, rng: &mut Rng, wt: &Path, i: u64) {
        let url = lib_origin().to_str().unwrap().to_string();
        let variant = rng.below(4);
        let paths: &[&str] = match variant {
            2 => &["deps/sub/lib"],
            3 => &["lib1", "lib2"],
            _ => &["lib"],
        };
        for p in paths {
            self.git(
                wt,
                &[
                    "-c",
                    "protocol.file.allow=always",
                    "submodule",
                    "add",
                    "-q",
                    &url,
                    p,
                ],
            );
        }
        self.git(wt, &["commit", "-q", "-m", "add submodules"]);
        for (k, p) in paths.iter().enumerate() {
            let sub = wt.join(p);
            let local_only = match variant {
                0 => false,
                1 => true,
                _ => rng.chance(50),
            };
            std::fs::write(sub.join("lib.c"), format!("v2 of {i}/{k}\n")).unwrap();
            if local_only {
                self.git(&sub, &["commit", "-q", "-am", "local-only lib work"]);
            } else {
                std::fs::write(sub.join("new.c"), "untracked in the submodule\n").unwrap();
            }
        }
    }

    /// Three branches of task `i`, each with a worktree: one live (spawned with a real
    /// process as its pid), two dead (spawned and exited, with commits and dirt by chance).
    pub(super) fn add_three_branches(&mut self, rng: &mut Rng, i: u64) {
        let branches = [
            format!("issue-{i}-a"),
            format!("feat/issue-{i}-b"),
            format!("fix/issue-{i}-c"),
        ];
        let live = rng.below(3) as usize;
        for (k, branch) in branches.iter().enumerate() {
            let wt = self.env.root().join(format!("wt/{i}-{k}"));
            let wt_s = wt.to_str().unwrap().to_string();
            self.git(
                &self.repo,
                &["worktree", "add", "-q", "-b", branch, &wt_s, "base0"],
            );
            if rng.chance(60) {
                self.commit_file(&wt, &format!("t{i}-{k}.txt"), &format!("{branch}\n"));
            }
            if k == live {
                let agent = Command::new("sleep").arg("600").spawn().unwrap();
                let pid = agent.id().to_string();
                self.extra.agents.push(agent);
                self.record(&["spawn", branch, "--pid", &pid]);
                if rng.chance(50) {
                    std::fs::write(wt.join("live-dirt.txt"), "the live agent's work\n").unwrap();
                }
                let head = self.git(&wt, &["rev-parse", "HEAD"]);
                self.extra.live.push((wt, head));
            } else {
                self.record(&["spawn", branch]);
                let rc = rng.pick(&["0", "1", "143"]).to_string();
                self.record(&["exit", branch, "--rc", &rc]);
                if rng.chance(50) {
                    self.dirty(rng, &wt, i * 10 + k as u64);
                }
            }
            self.workers.push(branch.clone());
        }
    }

    /// The branch of the worktree at `wt` deleted under it (HEAD left unborn), after its
    /// agent's commits; half the time the worktree's HEAD reflog goes too.
    pub(super) fn delete_branch_under(&mut self, rng: &mut Rng, wt: &Path, branch: &str) {
        self.commit_file(wt, "unborn-work.txt", "the agent's commit\n");
        let tip = self.git(wt, &["rev-parse", "HEAD"]);
        self.git(
            &self.repo,
            &["update-ref", "-d", &format!("refs/heads/{branch}")],
        );
        if rng.chance(50) {
            let gitdir = self.git(wt, &["rev-parse", "--path-format=absolute", "--git-dir"]);
            let _ = std::fs::remove_file(Path::new(&gitdir).join("logs/HEAD"));
        }
        self.extra.unborn.push((wt.to_path_buf(), tip));
    }

    /// An oversize untracked build artifact in the worktree at `wt`: over the trial's
    /// `recode.wipMaxFileSize` (80k), or under it (30k) where the origin refuses files
    /// over 20k for size.
    pub(super) fn oversize(&self, rng: &mut Rng, wt: &Path, i: u64) {
        let (path, size) = if self.faults.size_refusing && rng.chance(70) {
            (format!("out/deep/artifact-{i}.bin"), 30_000)
        } else {
            (format!("bin/big-{i}"), 80_000)
        };
        let p = wt.join(&path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let body: Vec<u8> = (0..size).map(|n| (n * 7 + i as usize) as u8).collect();
        std::fs::write(p, body).unwrap();
    }

    /// The origin refuses any new blob over 20,000 bytes, naming each in GitHub's words.
    pub(super) fn refuse_size(&self) {
        let hook = self.origin.join("hooks/pre-receive");
        std::fs::write(
            &hook,
            "#!/bin/sh\nwhile read old new ref; do\n  bad=$(git rev-list --objects \"$new\" --not --all | while read oid path; do\n    [ \"$(git cat-file -t $oid)\" = blob ] || continue\n    [ \"$(git cat-file -s $oid)\" -gt 20000 ] || continue\n    echo \"error: File $path is 0.03 MB; this exceeds GitHub's file size limit of 0.02 MB\"\n  done)\n  if [ -n \"$bad\" ]; then echo \"$bad\"; echo 'error: GH001: Large files detected.'; exit 1; fi\ndone\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Make the repository shallow at main's first commit after `base0`: every worker
    /// (branched at `base0`) then has no merge base with `main` in the available history.
    pub(super) fn make_shallow(&self) {
        let list = self.git(
            &self.repo,
            &["rev-list", "--reverse", "--first-parent", "base0..main"],
        );
        let first = list.lines().next().expect("main is ahead of base0");
        std::fs::write(self.repo.join(".git/shallow"), format!("{first}\n")).unwrap();
    }
}

impl Extra {
    /// The round-3 invariants after a run; one line per violation, each starting with
    /// `when`.
    pub(super) fn check(
        &self,
        env: &TestEnv,
        repo: &Path,
        origin: &Path,
        when: &str,
    ) -> Vec<String> {
        let mut v = Vec::new();
        for (wt, head) in &self.live {
            if !wt.is_dir() {
                v.push(format!(
                    "{when}: live worker's worktree {} removed",
                    wt.display()
                ));
                continue;
            }
            let now = env.git(wt, &["rev-parse", "HEAD"]);
            if &now != head {
                v.push(format!(
                    "{when}: live worker's HEAD in {} moved {head} -> {now}",
                    wt.display()
                ));
            }
        }
        for (wt, tip) in &self.unborn {
            let reachable = [repo, origin].iter().any(|d| {
                let out = env
                    .git_cmd(d)
                    .args(["branch", "-a", "--contains", tip])
                    .output()
                    .unwrap();
                out.status.success() && !out.stdout.is_empty()
            });
            let kept = env
                .git_cmd(repo)
                .args(["cat-file", "-e", &format!("{tip}^{{commit}}")])
                .output()
                .unwrap()
                .status
                .success();
            if !(reachable || (kept && wt.is_dir())) {
                v.push(format!(
                    "{when}: the agent's commit {tip} of the branch deleted under {} is lost",
                    wt.display()
                ));
            }
        }
        v
    }
}
