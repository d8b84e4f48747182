//! Conditional requests (SPEC "Forge"): the ETag and body of each GET answer, kept
//! between runs in `<common-dir>/recode/etags.json` so the next run can send
//! `If-None-Match` and reuse the body on a `304 Not Modified`, which GitHub does not count
//! against the rate limit.
//!
//! The file is a JSON object: request key (the URL with its query) → `{etag, body, link,
//! used}` (`used`: epoch seconds of the last run that needed it). Entries unused for
//! [`KEEP_SECS`] are dropped. Writes are atomic (a temporary file renamed over the old
//! one) and merge with what another process wrote meanwhile; a cache that cannot be read
//! is empty, one that cannot be written costs a warning, never the run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How long an entry nobody used is kept: 7 days, in seconds.
pub(crate) const KEEP_SECS: i64 = 7 * 24 * 3600;
/// An entry's `used` time is refreshed (and the file rewritten) only when older than this
/// many seconds, so a tick in which nothing changed does not rewrite the file.
const TOUCH_SECS: i64 = 3600;

/// One remembered answer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The `etag` header GitHub sent (opaque, quoted).
    pub etag: String,
    /// The body that came with it.
    pub body: String,
    /// The `link` header (pagination) that came with it.
    #[serde(default)]
    pub link: Option<String>,
    /// Epoch seconds of the last run that used it.
    #[serde(default)]
    pub used: i64,
}

/// The ETag cache of one run.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    path: Option<PathBuf>,
    entries: BTreeMap<String, Entry>,
    dirty: bool,
}

fn read(path: &Path) -> BTreeMap<String, Entry> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::debug!(path = %path.display(), error = %e, "ignoring an unreadable etag cache");
            BTreeMap::new()
        }),
        Err(_) => BTreeMap::new(),
    }
}

impl Cache {
    /// No file: remembers answers within the run only.
    pub(crate) fn in_memory() -> Cache {
        Cache::default()
    }

    /// The cache kept in `path` (read now; a missing or unreadable file is empty).
    pub(crate) fn at(path: PathBuf) -> Cache {
        Cache {
            entries: read(&path),
            path: Some(path),
            dirty: false,
        }
    }

    /// The entry for `key`, marked used at `now` (epoch seconds).
    pub(crate) fn get(&mut self, key: &str, now: i64) -> Option<Entry> {
        let e = self.entries.get_mut(key)?;
        if now - e.used > TOUCH_SECS {
            e.used = now;
            self.dirty = true;
        }
        Some(e.clone())
    }

    /// Remember an answer.
    pub(crate) fn put(&mut self, key: &str, entry: Entry) {
        if self.entries.get(key) != Some(&entry) {
            self.entries.insert(key.to_string(), entry);
            self.dirty = true;
        }
    }

    /// Write the file when something changed: merge with what is on disk now (the newer
    /// `used` wins), drop entries unused since `now - KEEP_SECS`, write a temporary file
    /// beside it and rename it over. Returns a warning when it cannot be written.
    pub(crate) fn save(&mut self, now: i64) -> Option<String> {
        let path = self.path.as_ref()?;
        if !self.dirty {
            return None;
        }
        let mut merged = read(path);
        for (k, e) in std::mem::take(&mut self.entries) {
            match merged.get(&k) {
                Some(old) if old.used > e.used => {}
                _ => {
                    merged.insert(k, e);
                }
            }
        }
        merged.retain(|_, e| e.used >= now - KEEP_SECS);
        self.entries = merged;
        let result = (|| -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = path.with_extension(format!("json.tmp.{}", std::process::id()));
            let text = serde_json::to_string(&self.entries).map_err(std::io::Error::other)?;
            std::fs::write(&tmp, text).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })?;
            std::fs::rename(&tmp, path).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })
        })();
        self.dirty = false;
        result.err().map(|e| {
            format!(
                "cannot write the forge's ETag cache {}: {e} (the next run asks again in full)",
                path.display()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(etag: &str, used: i64) -> Entry {
        Entry {
            etag: etag.into(),
            body: format!("body {etag}"),
            link: None,
            used,
        }
    }

    #[test]
    fn saves_atomically_merges_and_expires() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recode").join("etags.json");
        let mut a = Cache::at(path.clone());
        a.put("u1", entry("\"1\"", 1000));
        a.put("old", entry("\"o\"", 1000 - KEEP_SECS - 1));
        assert_eq!(a.save(1000), None);
        // Another process wrote u2 meanwhile; both survive, the expired one does not.
        let mut b = Cache::at(path.clone());
        assert_eq!(b.get("u1", 1000), Some(entry("\"1\"", 1000)));
        assert_eq!(b.get("old", 1000), None);
        b.put("u2", entry("\"2\"", 1001));
        assert_eq!(b.save(1001), None);
        a.put("u3", entry("\"3\"", 1002));
        assert_eq!(a.save(1002), None);
        let on_disk = read(&path);
        assert_eq!(
            on_disk.keys().collect::<Vec<_>>(),
            vec!["u1", "u2", "u3"],
            "merged"
        );
        // No temporary file is left.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["etags.json".to_string()]);
    }

    #[test]
    fn an_unwritable_cache_is_a_warning_and_a_corrupt_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        // The parent "directory" is a file: nothing can be written under it.
        let blocker = dir.path().join("recode");
        std::fs::write(&blocker, "not a directory").unwrap();
        let mut c = Cache::at(blocker.join("etags.json"));
        c.put("u", entry("\"1\"", 5));
        let w = c.save(5).unwrap();
        assert!(w.starts_with("cannot write the forge's ETag cache "), "{w}");

        let corrupt = dir.path().join("etags.json");
        std::fs::write(&corrupt, "{not json").unwrap();
        let mut c = Cache::at(corrupt);
        assert_eq!(c.get("u", 5), None);
        // Nothing changed: nothing is written.
        assert_eq!(c.save(5), None);
    }
}
