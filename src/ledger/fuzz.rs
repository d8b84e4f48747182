//! Property tests of the ledger line reader (SPEC 1.2 "Untrusted input stays out": a
//! note's lines are untrusted bytes; SPEC "Where state lives": one canonical JSON object
//! a line), with a seeded generator (`fastrand`):
//! - round trip: for any event, `parse(canonical(e)) == e`, the line read is the
//!   canonical line, and `canonical` of what was read is the same bytes;
//! - many events in one note come back in order, one entry each, whatever their strings
//!   hold (breaks, quotes, NUL, U+2028, bidi marks, invalid UTF-8 decoded lossily);
//! - random bytes and mutated lines never panic, and every non-blank line is either an
//!   entry or a warning (a line whose `head` is not a commit id, or whose `retry_after`
//!   is not a time, is an entry with a warning: the event is kept without that field).
//!
//! A fixed-seed handful runs in `cargo test`; `RECODE_FUZZ_CASES=N` runs more (`RECODE_FUZZ_SEED` shifts the seeds).

use super::parse_note;
use crate::model::{Body, Event, GateBy};
use crate::outcome::Outcome;

/// The generator for one property: `RECODE_FUZZ_SEED` (added to `seed`) or `seed`.
fn rng(seed: u64) -> fastrand::Rng {
    let extra = std::env::var("RECODE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    fastrand::Rng::with_seed(seed.wrapping_add(extra))
}

fn cases() -> usize {
    std::env::var("RECODE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// A string an attacker or an odd tool could store.
fn text(rng: &mut fastrand::Rng) -> String {
    const PIECES: &[&str] = &[
        "a",
        "issue-7",
        " ",
        "\"",
        "\\",
        "\n",
        "\r",
        "\r\n",
        "\t",
        "\u{0}",
        "\u{1b}",
        "\u{7f}",
        "\u{85}",
        "\u{2028}",
        "\u{2029}",
        "\u{202e}",
        "\u{fffd}",
        "é",
        "日本",
        "😀",
        "{",
        "}",
        "\"kind\":\"exit\"",
        "----- END -----",
        "\u{feff}",
    ];
    (0..rng.usize(..12))
        .map(|_| PIECES[rng.usize(..PIECES.len())])
        .collect()
}

fn opt(rng: &mut fastrand::Rng) -> Option<String> {
    rng.bool().then(|| text(rng))
}

/// A session id, or none: any text the reader keeps ([`crate::fence::session_id_ok`]; an id
/// it drops is tested by `tests/it/untrusted_session.rs`), so an event reads back as it was written.
fn session(rng: &mut fastrand::Rng) -> Option<String> {
    opt(rng).filter(|id| crate::fence::session_id_ok(id))
}

fn texts(rng: &mut fastrand::Rng) -> Vec<String> {
    (0..rng.usize(..3)).map(|_| text(rng)).collect()
}

/// An event of any kind with any field values.
fn event(rng: &mut fastrand::Rng) -> Event {
    let body = match rng.u8(..13) {
        kind @ 0..5 => reported_body(rng, kind),
        kind => other_body(rng, kind),
    };
    Event {
        v: rng.u32(..3),
        // Any millisecond from 1970 to 2100: the wire format keeps milliseconds.
        ts: jiff::Timestamp::from_millisecond(rng.i64(0..4_102_444_800_000)).unwrap(),
        seq: rng.u64(..),
        task: text(rng),
        branch: opt(rng),
        // A SHA-1 id (the notes read here are a SHA-1 repository's; another format's
        // head is dropped, read.rs `head_tests`).
        head: rng
            .bool()
            .then(|| gix::ObjectId::from(std::array::from_fn::<u8, 20, _>(|_| rng.u8(..)))),
        body,
    }
}

/// A body of kind `kind` (0 to 4): `spawn`, `exit`, `milestone`, `gate`, else
/// `classified`.
fn reported_body(rng: &mut fastrand::Rng, kind: u8) -> Body {
    match kind {
        0 => Body::Spawn {
            attempt: rng.u32(..),
            cwd: text(rng),
            host: text(rng),
            label: opt(rng),
            session_id: session(rng),
            agent: opt(rng),
            pid: rng.bool().then(|| rng.u32(..)),
            pid_start: opt(rng),
            output: opt(rng),
            prompt: opt(rng),
            agent_args: rng.bool().then(|| vec![text(rng), text(rng)]),
            config_dir: opt(rng),
        },
        1 => Body::Exit {
            rc: rng.i32(..),
            outcome: [
                Outcome::Success,
                Outcome::Failed,
                Outcome::Transient,
                Outcome::Blocked,
                Outcome::NeedsHuman,
            ][rng.usize(..5)],
            message: opt(rng),
            // Whole seconds: the wire form of `retry_after`.
            retry_after: rng
                .bool()
                .then(|| crate::clock::from_secs(rng.i64(0..4_102_444_800))),
            fresh: rng.bool().then(|| rng.bool()),
            blocker: opt(rng),
            session_id: session(rng),
            ends: rng.bool().then(|| crate::model::event::Ends {
                attempt: rng.u32(..),
                host: format!("h{}", rng.u8(..)),
            }),
        },
        2 => Body::Milestone {
            phase: text(rng),
            session_id: session(rng),
        },
        3 => Body::Gate {
            passed: rng.bool(),
            command: opt(rng),
            by: if rng.bool() {
                GateBy::Recover
            } else {
                GateBy::Record
            },
        },
        _ => Body::Classified {
            state: [
                crate::model::State::NeedsHuman,
                crate::model::State::Published,
                crate::model::State::Empty,
                crate::model::State::HalfDone,
            ][rng.usize(..4)],
            action: [
                crate::model::Action::Escalate,
                crate::model::Action::Resume,
                crate::model::Action::Wait,
                crate::model::Action::Delete,
            ][rng.usize(..4)],
            reason: text(rng),
            error: opt(rng),
        },
    }
}

/// A body of kind `kind` (5 to 12): `wip`, `published`, `unblocked`, `cleared`,
/// `deleted`, `phantom`, `resume`, else `escalated`.
fn other_body(rng: &mut fastrand::Rng, kind: u8) -> Body {
    match kind {
        5 => Body::Wip {
            files: rng.u32(..),
            pushed: rng.bool(),
            held: opt(rng),
            left_out: texts(rng),
        },
        6 => Body::Published {
            pr: rng.u64(..),
            url: text(rng),
        },
        7 => Body::Unblocked,
        8 => Body::Cleared { reason: opt(rng) },
        9 => Body::Deleted {
            worktree: opt(rng),
            ignored: texts(rng),
        },
        10 => Body::Phantom { reason: text(rng) },
        11 => Body::Resume {
            attempt: rng.u32(..),
            session_id: session(rng),
            prompt_sha: opt(rng),
            host: None,
            label: None,
        },
        _ => Body::Escalated { reason: text(rng) },
    }
}

#[test]
fn every_event_round_trips_through_its_canonical_line() {
    let mut rng = rng(0x1ed9e5);
    for _ in 0..cases() {
        let e = event(&mut rng);
        let line = e.canonical();
        assert!(!line.contains(['\n', '\r']), "one line: {line}");
        let mut w = Vec::new();
        let read = parse_note(&format!("{line}\n"), "t", &mut w);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(read.len(), 1, "{line}");
        assert_eq!(read[0].event, e);
        assert_eq!(read[0].line, line);
        assert_eq!(
            read[0].event.canonical(),
            line,
            "canonical bytes are stable"
        );
    }
}

#[test]
fn a_note_of_many_events_reads_back_in_order() {
    let mut rng = rng(7);
    for _ in 0..cases() / 10 {
        let events: Vec<Event> = (0..rng.usize(1..30)).map(|_| event(&mut rng)).collect();
        let note: String = events.iter().map(|e| e.canonical() + "\n").collect();
        // Stored as bytes, read lossily: what a CRLF checkout or a blank line adds is
        // ignored.
        let note = note.replace('\n', if rng.bool() { "\r\n" } else { "\n\n" });
        let mut w = Vec::new();
        let read = parse_note(&note, "t", &mut w);
        assert!(w.is_empty(), "{w:?}");
        let got: Vec<&Event> = read.iter().map(|x| &x.event).collect();
        assert_eq!(got, events.iter().collect::<Vec<_>>());
    }
}

#[test]
fn random_and_mutated_lines_are_entries_or_warnings_never_a_panic() {
    let mut rng = rng(0xbad_1e5);
    for _ in 0..cases() {
        let mut bytes: Vec<u8> = Vec::new();
        for _ in 0..rng.usize(1..8) {
            let mut line = match rng.u8(..3) {
                0 => (0..rng.usize(..120)).map(|_| rng.u8(..)).collect(),
                1 => event(&mut rng).canonical().into_bytes(),
                _ => {
                    let mut l = event(&mut rng).canonical().into_bytes();
                    // Flip, cut or splice bytes of a good line.
                    for _ in 0..rng.usize(1..4) {
                        if l.is_empty() {
                            break;
                        }
                        let i = rng.usize(..l.len());
                        match rng.u8(..3) {
                            0 => l[i] = rng.u8(..),
                            1 => l.truncate(i),
                            _ => {
                                const SPICE: &[u8] = b"{}[]\",:\\\xff\xc3";
                                l.insert(i, SPICE[rng.usize(..SPICE.len())]);
                            }
                        }
                    }
                    l
                }
            };
            line.retain(|b| *b != b'\n');
            bytes.extend_from_slice(&line);
            bytes.push(b'\n');
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines = text
            .lines()
            .filter(|l| !l.trim_end_matches('\r').trim().is_empty())
            .count();
        let mut w = Vec::new();
        let read = parse_note(&text, "t", &mut w);
        // A line whose head is not a commit id is an entry and a warning.
        let skipped = w.iter().filter(|m| m.contains("; skipped: ")).count();
        assert_eq!(read.len() + skipped, lines, "{text:?}");
    }
}
