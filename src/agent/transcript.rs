//! Claude's session transcripts: where they are, and the API error a transcript's last
//! line names.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::session_id_ok;

/// Claude's config dir: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub(crate) fn claude_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude"))
}

/// Transcripts by session id (`projects/*/<id>.jsonl`), found by file name, listed once per
/// process; a file whose name is no session id ([`session_id_ok`]) is not one.
fn transcripts() -> &'static HashMap<String, PathBuf> {
    static T: OnceLock<HashMap<String, PathBuf>> = OnceLock::new();
    T.get_or_init(|| {
        let mut map = HashMap::new();
        let Some(projects) = claude_dir().map(|d| d.join("projects")) else {
            return map;
        };
        for dir in std::fs::read_dir(projects).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let p = f.path();
                if p.extension().is_some_and(|e| e == "jsonl")
                    && let Some(stem) = p.file_stem().and_then(|s| s.to_str())
                    && session_id_ok(stem)
                {
                    map.insert(stem.to_string(), p);
                }
            }
        }
        map
    })
}

/// The transcript of session `id`, if one is on this machine.
pub(crate) fn transcript(id: &str) -> Option<&'static Path> {
    transcripts().get(id).map(PathBuf::as_path)
}

/// The `error` of the transcript's last line when that line is an API error
/// (`rate_limit`, `server_error`, `authentication_failed`, `invalid_request`, …).
pub fn transcript_error(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let last = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let v: serde_json::Value = serde_json::from_str(last).ok()?;
    if v["isApiErrorMessage"].as_bool() == Some(true) || v["error"].is_string() {
        v["error"].as_str().map(str::to_string)
    } else {
        None
    }
}
