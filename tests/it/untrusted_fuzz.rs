//! Property tests of the outcome reader (SPEC 1.2 "Untrusted input stays out": final
//! messages and agents' JSON are untrusted bytes): `outcome::classify`,
//! `agent::parse_result`, `agent::decide` and `agent::transcript_error` over inputs made
//! from the real samples in `tests/data/` by a seeded generator (mutated, spliced, cut,
//! repeated, random bytes). Properties: no panic; every input read in bounded time (a
//! generous per-input ceiling that only a runaway would pass, not a benchmark). A small fixed-seed handful runs in the suite;
//! `RECODE_FUZZ_CASES=N` runs more (`RECODE_FUZZ_SEED` shifts the seeds) (see `benches/untrusted-fuzz.sh`).
//!
//! The ledger line reader's properties are unit tests (`src/ledger/fuzz.rs`): its parser
//! is private to the ledger.

use std::path::Path;
use std::time::{Duration, Instant};

use git_recode::app::parts::outcome;
use git_recode::app::parts::outcome::{self as agent, MESSAGE_KEEP_BYTES, tail_utf8};

/// Inputs per property in the suite.
const CASES: usize = 15;

/// The ceiling for one input, however hostile: a runaway (quadratic scan, a retry loop)
/// passes it, any linear reading stays far below.
const CEILING: Duration = Duration::from_secs(2);

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
        .unwrap_or(CASES)
}

/// The samples: every final message of the table and every agent output file.
fn samples() -> Vec<String> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut out: Vec<String> = std::fs::read_to_string(data.join("final-messages.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split('\t').nth(5))
        .map(|m| m.replace("\\n", "\n"))
        .collect();
    // Each agent's samples, one directory per agent (any depth).
    let mut dirs = vec![data.join("agents")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                out.push(String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned());
            }
        }
    }
    assert!(out.len() > 20, "the samples are missing");
    out
}

/// Characters an attacker reaches for: JSON's own, breaks, controls, bidi marks,
/// digits and units a reset reader parses, wide characters.
const SPICE: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    "\\",
    ":",
    ",",
    "\n",
    "\r",
    "\u{0}",
    "\u{1b}",
    "\u{85}",
    "\u{2028}",
    "\u{202e}",
    "\u{feff}",
    "9999999999999999999",
    "-1",
    "1e309",
    "pm",
    "am",
    " at ",
    "resets ",
    "in 5h",
    "retry after ",
    "UTC",
    "(Asia/Tokyo)",
    "\u{fffd}",
    "日本",
    "\"type\":\"result\"",
    "\"is_error\":true",
    "\"session_id\":",
    "\"error\":{",
];

/// One mutated input from the samples.
fn mutate(rng: &mut fastrand::Rng, samples: &[String]) -> String {
    let mut s = samples[rng.usize(..samples.len())].clone();
    for _ in 0..rng.usize(1..6) {
        let cut = |s: &String, rng: &mut fastrand::Rng| {
            let mut i = rng.usize(..=s.len());
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        match rng.u8(..7) {
            0 => {
                let i = cut(&s, rng);
                s.insert_str(i, SPICE[rng.usize(..SPICE.len())]);
            }
            1 => {
                let (a, b) = (cut(&s, rng), cut(&s, rng));
                s.replace_range(a.min(b)..a.max(b), "");
            }
            2 => {
                let other = &samples[rng.usize(..samples.len())];
                let i = cut(&s, rng);
                s.insert_str(i, other);
            }
            3 => {
                let i = cut(&s, rng);
                s.truncate(i);
            }
            4 => s = s.repeat(rng.usize(2..50)),
            5 => {
                let bytes: Vec<u8> = (0..rng.usize(..200)).map(|_| rng.u8(..)).collect();
                let i = cut(&s, rng);
                s.insert_str(i, &String::from_utf8_lossy(&bytes));
            }
            _ => s = s.to_uppercase(),
        }
    }
    s
}

fn now() -> jiff::Timestamp {
    "2026-11-29T10:00:00Z".parse().unwrap()
}

/// Read `input` every way an outcome is read; panics on a broken property.
fn read_all_ways(input: &str, rc: i32, dir: &Path) {
    let started = Instant::now();
    // A final message reaches the text reader as the ledger stores it: its last 4 KiB
    // (`record exit`); the agent's JSON and the transcript are read whole.
    let message = tail_utf8(input, MESSAGE_KEEP_BYTES);
    let v = outcome::classify(rc, &message, now());
    assert_eq!(
        v,
        outcome::classify(rc, &message, now()),
        "one reading per input"
    );
    let result = agent::parse_result(input);
    let _ = agent::decide(
        rc,
        &message,
        Some(&result),
        Some(&message),
        now(),
        agent::Habits::TRUSTED,
    );
    let transcript = dir.join("transcript.jsonl");
    std::fs::write(&transcript, input).unwrap();
    let _ = agent::transcript_error(&transcript);
    assert!(
        started.elapsed() < CEILING,
        "{:?} to read {} bytes",
        started.elapsed(),
        input.len()
    );
}

#[test]
fn the_outcome_reader_survives_mutated_agent_output() {
    let samples = samples();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rng(0x5eed_0022);
    for _ in 0..cases() {
        let input = mutate(&mut rng, &samples);
        let rc = [0, 1, 2, 124, 137, -1, i32::MAX][rng.usize(..7)];
        read_all_ways(&input, rc, dir.path());
    }
}

#[test]
fn the_outcome_reader_survives_random_bytes_and_huge_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rng(22);
    for _ in 0..cases() {
        let bytes: Vec<u8> = (0..rng.usize(..2000)).map(|_| rng.u8(..)).collect();
        read_all_ways(&String::from_utf8_lossy(&bytes), 1, dir.path());
    }
    // Long inputs of the shapes a reader scans: one huge line, many short JSON lines,
    // deep nesting.
    let limit = "rate limit reached, resets 5pm ".repeat(20_000);
    let lines = "{\"type\":\"assistant\",\"session_id\":\"s\"}\n".repeat(20_000);
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    for input in [limit, lines, deep] {
        read_all_ways(&input, 1, dir.path());
    }
}
