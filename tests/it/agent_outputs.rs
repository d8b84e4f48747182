//! SPEC 1.3 "Real agents": every real agent CLI's output for each way a run fails, kept
//! as test data with the agent's version (`tests/data/agents/<agent>-<version>/`, each
//! with an `expect.tsv`: file, rc, outcome, fresh), is read right by `record exit
//! --result-json`; so an upgrade that changes a wording fails here, not in a loop.
//! `RECODE_AGENT_OUTPUTS` may name more such directories (a held-back set), separated by
//! `:`.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;

/// The directories of captured outputs: the repository's, then any held back.
fn output_dirs() -> Vec<PathBuf> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("expect.tsv").is_file())
        .collect();
    dirs.sort();
    if let Some(extra) = std::env::var_os("RECODE_AGENT_OUTPUTS") {
        dirs.extend(std::env::split_paths(&extra).filter(|p| p.join("expect.tsv").is_file()));
    }
    dirs
}

/// `(file, rc, outcome, fresh)` rows of a directory's `expect.tsv`.
fn expected(dir: &Path) -> Vec<(String, String, String, bool)> {
    std::fs::read_to_string(dir.join("expect.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "{}: {l:?}", dir.display());
            (f[0].into(), f[1].into(), f[2].into(), f[3] == "true")
        })
        .collect()
}

#[test]
fn every_captured_real_agent_output_is_read_as_the_spec_says() {
    let dirs = output_dirs();
    for pinned in [
        "claude-2.1.332",
        "codex-0.171.0",
        "gemini-0.61.0",
        "opencode-1.18.33",
    ] {
        assert!(
            dirs.iter().any(|d| d.ends_with(pinned)),
            "{pinned}: {dirs:?}"
        );
    }
    let env = TestEnv::new();
    let repo = env.repo("r");
    let mut wrong = Vec::new();
    let mut read = 0;
    for dir in &dirs {
        let agent = dir
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .rsplit_once('-')
            .unwrap()
            .0
            .to_string();
        for (n, (file, rc, outcome, fresh)) in expected(dir).into_iter().enumerate() {
            // One branch a file, so no reading depends on the one before.
            let branch = format!("issue-{}-{agent}-{n}", read + 1);
            env.ok(&repo, &["record", "spawn", &branch, "--agent", &agent]);
            let path = dir.join(&file);
            let got = env.ok(
                &repo,
                &[
                    "record",
                    "exit",
                    &branch,
                    "--rc",
                    &rc,
                    "--result-json",
                    path.to_str().unwrap(),
                ],
            );
            let log = env.ok(&repo, &["log", &branch, "--json"]);
            let last: serde_json::Value =
                serde_json::from_str(log.lines().last().unwrap()).unwrap();
            let got_fresh = last["fresh"] == true;
            if got.trim() != outcome || got_fresh != fresh {
                wrong.push(format!(
                    "{}/{file}: read {} fresh {got_fresh}, expected {outcome} fresh {fresh}",
                    dir.display(),
                    got.trim()
                ));
            }
            read += 1;
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {read} misread:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(read >= 101, "{read}");
}
