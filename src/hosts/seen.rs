//! Silence on the observer's clock (SPEC 1.3 "Several machines, by the observer's clock"):
//! when this host first saw each other host's heartbeat ref at its current value (and each
//! other host's newest attempt, and each claim), by this host's own clock. That time ages,
//! never the writer's `ts`: a heartbeat that moves is alive whatever its `ts` says.
//!
//! Kept in `<common dir>/recode/hosts-seen`, one line per thing watched:
//! `<key>\t<value>\t<first seen, unix seconds>\t<skew seconds>` (`skew`: the writer's `ts`
//! minus this host's clock when first seen, for `doctor`; 0 where there is no `ts`). A key
//! has one line: a new value replaces it. Written whole to a temporary file and renamed
//! (a reader never sees half a file); two writers at once may lose one's line, which only
//! makes that thing look seen later (younger), never older.

use std::collections::BTreeMap;
use std::path::PathBuf;

use jiff::Timestamp;

/// The file's name under `<common dir>/recode/`.
pub(crate) const FILE: &str = "hosts-seen";

/// One thing watched: its value, when first seen at that value, and the writer's skew.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    value: String,
    first: i64,
    skew: i64,
}

/// The store, read once per command and written back when it changed.
#[derive(Debug)]
pub(crate) struct Seen {
    path: PathBuf,
    entries: BTreeMap<String, Entry>,
    changed: bool,
}

/// When a thing was first seen at its current value, on this host's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sighting {
    /// First seen at its current value (this host's clock).
    pub first: Timestamp,
    /// The writer's `ts` minus this host's clock at that moment, in seconds.
    pub skew: i64,
}

/// The whole of `r` when it holds at most `limit` bytes, else `None`.
pub(crate) fn read_at_most(r: impl std::io::Read, limit: u64) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut r.take(limit + 1), &mut buf).ok()?;
    (buf.len() as u64 <= limit).then_some(buf)
}

impl Seen {
    /// Read the store of `repo` (empty when missing or unreadable).
    pub(crate) fn load(repo: &gix::Repository) -> Seen {
        let path = repo.common_dir().join("recode").join(FILE);
        // Bounded: a store is a few lines per host and worker; a huge one is ignored.
        let text = std::fs::File::open(&path)
            .ok()
            .and_then(|f| read_at_most(f, 4 << 20))
            .unwrap_or_default();
        let entries = String::from_utf8_lossy(&text)
            .lines()
            .filter_map(|l| {
                let mut p = l.split('\t');
                let (k, v, first, skew) = (p.next()?, p.next()?, p.next()?, p.next()?);
                let e = Entry {
                    value: v.to_string(),
                    first: first.parse().ok()?,
                    skew: skew.parse().ok()?,
                };
                Some((k.to_string(), e))
            })
            .collect();
        Seen {
            path,
            entries,
            changed: false,
        }
    }

    /// When `key` was first seen at `value`: now (with `skew`) when it is new or changed,
    /// or when the recorded moment is after `now` (this clock went back: ageing starts
    /// again from now, which only delays a takeover).
    pub(crate) fn sight(&mut self, key: &str, value: &str, now: Timestamp, skew: i64) -> Sighting {
        let now_s = now.as_second();
        let fresh = Entry {
            value: value.to_string(),
            first: now_s,
            skew,
        };
        let e = self.entries.entry(key.to_string()).or_insert_with(|| {
            self.changed = true;
            fresh.clone()
        });
        if e.value != value || e.first > now_s {
            *e = fresh;
            self.changed = true;
        }
        Sighting {
            first: Timestamp::from_second(e.first).unwrap_or(now),
            skew: e.skew,
        }
    }

    /// Forget the keys starting with `prefix` that `keep` does not hold (refs gone).
    pub(crate) fn retain(&mut self, prefix: &str, keep: impl Fn(&str) -> bool) {
        let before = self.entries.len();
        self.entries
            .retain(|k, _| !k.starts_with(prefix) || keep(k));
        self.changed |= self.entries.len() != before;
    }

    /// Write the store back when it changed (best effort: a failure only makes things
    /// look seen later).
    pub(crate) fn save(&self) {
        if !self.changed {
            return;
        }
        let mut text = String::new();
        for (k, e) in &self.entries {
            text.push_str(&format!("{k}\t{}\t{}\t{}\n", e.value, e.first, e.skew));
        }
        let tmp = self
            .path
            .with_file_name(format!("{FILE}.tmp-{}", std::process::id()));
        let written = self
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&tmp, text))
            .and_then(|()| std::fs::rename(&tmp, &self.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            tracing::debug!(error = %e, "cannot write {}", self.path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_900_000_000 + s).unwrap()
    }

    #[test]
    fn a_value_ages_from_its_first_sight_and_a_new_value_starts_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Seen {
            path: dir.path().join(FILE),
            entries: BTreeMap::new(),
            changed: false,
        };
        assert_eq!(s.sight("beat x", "a1", t(0), 10800).first, t(0));
        assert_eq!(
            s.sight("beat x", "a1", t(50), 0),
            Sighting {
                first: t(0),
                skew: 10800
            }
        );
        assert_eq!(s.sight("beat x", "b2", t(60), 5).first, t(60), "it moved");
        assert_eq!(
            s.sight("beat x", "b2", t(30), 5).first,
            t(30),
            "the clock went back"
        );
        s.save();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert_eq!(text, format!("beat x\tb2\t{}\t5\n", t(30).as_second()));
        s.retain("beat ", |_| false);
        assert!(s.entries.is_empty());
    }
}
