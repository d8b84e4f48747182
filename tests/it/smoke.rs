//! The end-to-end smoke test: `fixtures/smoke-fanout.sh 8 4242` — eight workers hit by a
//! seeded fault plan, recovered by a plain shell loop with no human. See the script.

use std::path::Path;
use std::process::Command;

#[test]
fn killed_stalled_dirty_phantom_and_limited_workers_all_recover() {
    let bin = assert_cmd::cargo::cargo_bin("git-recode");
    let dir = bin.parent().unwrap();
    let examples = dir.join("examples");
    if !examples.join("fake-github").exists() {
        // `cargo test` builds examples; a lone `cargo test --test smoke` may not have.
        let st = Command::new(env!("CARGO"))
            .args(["build", "--example", "fake-github"])
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
    let out = Command::new("bash")
        .arg(&script)
        .args(["8", "4242"])
        .env("PATH", path)
        .env_remove("RECODE_NOW")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with("smoke: ok N=8 seed=4242 ticks="),
        "{stdout}"
    );
}
