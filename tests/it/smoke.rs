//! The end-to-end smoke test: `fixtures/smoke-fanout.sh 8 <seed>` — eight workers hit by a
//! seeded fault plan, a CI that fails some pull requests' first pushes and a reviewer who
//! requests changes on one, recovered by a plain shell loop with no human (each failing
//! check and requested change answered by a resume whose agent pushes a fix), until every
//! pull request passes (and is approved where reviewed) or needs a human at the cap. See
//! the script. Seeds: `RECODE_SMOKE_SEEDS` (space-separated), default `4242 7`;
//! `fixtures/smoke-seeds.sh` runs twenty. GitLab and Gitea: `forge_smoke.rs`.

use std::path::Path;
use std::process::Command;

/// Run the harness on `forge` (`github`, `gitlab`, `gitea`: `SMOKE_FORGE`) for each of
/// `seeds`; each must print `smoke: ok N=8 seed=<seed> ticks=…` and exit 0.
pub(crate) fn smoke(forge: &str, seeds: &str) {
    let bin = assert_cmd::cargo::cargo_bin("git-recode");
    let dir = bin.parent().unwrap();
    let examples = dir.join("examples");
    let fake = format!("fake-{forge}");
    if !examples.join(&fake).exists() {
        // `cargo test` builds examples; a lone `cargo test --test smoke` may not have.
        let st = Command::new(env!("CARGO"))
            .args(["build", "--example", &fake])
            .status()
            .unwrap();
        assert!(st.success());
    }
    let path = format!(
        "{}:{}:{}",
        dir.display(),
        examples.display(),
        std::env::var("PATH").unwrap()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/smoke-fanout.sh");
    for seed in seeds.split_whitespace() {
        let out = Command::new("bash")
            .arg(&script)
            .args(["8", seed])
            .env("PATH", &path)
            .env("SMOKE_FORGE", forge)
            .envs(crate::common::format_env())
            .env_remove("RECODE_NOW")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{forge} seed {seed}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.starts_with(&format!("smoke: ok N=8 seed={seed} ticks=")),
            "{stdout}"
        );
    }
}

#[test]
fn killed_stalled_dirty_phantom_limited_and_red_workers_all_recover() {
    let seeds = std::env::var("RECODE_SMOKE_SEEDS").unwrap_or_else(|_| "4242 7".into());
    smoke("github", &seeds);
}
