//! A live agent parked on a limit (SPEC 1.2 "Outcomes: every agent"): OpenCode retries a
//! quota for days with its process alive, Copilot re-prompts through rate limits. The
//! newest line of the agent's output (the `record spawn --output` file, else its
//! transcript) tells: when it reads as a limit, the worker waits until the limit's reset.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use jiff::Timestamp;

use crate::outcome::signs::Kind;
use crate::outcome::{backoff, find_sign, reset_time};

/// How much of the file's end is read, in bytes (64 KiB): the newest line is in it.
pub(crate) const TAIL_BYTES: u64 = 64 * 1024;

/// When a worker whose newest output line is `path`'s last reads as a limit may go on:
/// the reset the line names (read from the file's mtime, when the line was written),
/// else the mtime plus the first backoff ([`backoff::BASE_SECS`]). `None` when the file
/// is missing, empty, or its newest line is no limit.
pub(crate) fn parked_until(path: &Path) -> Option<Timestamp> {
    let mut f = std::fs::File::open(path).ok()?;
    let meta = f.metadata().ok()?;
    let written = Timestamp::try_from(meta.modified().ok()?).ok()?;
    let start = meta.len().saturating_sub(TAIL_BYTES);
    f.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    f.take(TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let last = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let words = line_text(last);
    match find_sign(1, &words) {
        Some((Kind::Transient, _)) => reset_time(&words, written).or_else(|| {
            written
                .checked_add(jiff::SignedDuration::from_secs(backoff::BASE_SECS))
                .ok()
        }),
        _ => None,
    }
}

/// The words of one output line: a JSON event's string values (one a line), else the
/// line itself.
fn line_text(line: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(line.trim()) {
        Ok(v) => {
            let mut out = Vec::new();
            strings(&v, &mut out);
            out.join("\n")
        }
        Err(_) => line.to_string(),
    }
}

/// Every string value in `v`, depth first.
fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_line_decides() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.jsonl");
        std::fs::write(&p, "working\nRate Limited [retrying in 2h5m attempt #4]\n").unwrap();
        let mtime =
            Timestamp::try_from(std::fs::metadata(&p).unwrap().modified().unwrap()).unwrap();
        let at = parked_until(&p).unwrap();
        assert_eq!(at.as_second() - mtime.as_second(), 2 * 3600 + 5 * 60);
        std::fs::write(&p, "Rate Limited\nback to work: editing src/lib.rs\n").unwrap();
        assert_eq!(parked_until(&p), None);
        std::fs::write(
            &p,
            "{\"type\":\"session.warning\",\"data\":{\"message\":\"Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 15 hours 23 minutes.\"}}\n",
        )
        .unwrap();
        let mtime =
            Timestamp::try_from(std::fs::metadata(&p).unwrap().modified().unwrap()).unwrap();
        assert_eq!(
            parked_until(&p).unwrap().as_second() - mtime.as_second(),
            15 * 3600 + 23 * 60
        );
        assert_eq!(parked_until(&dir.path().join("none")), None);
    }
}
