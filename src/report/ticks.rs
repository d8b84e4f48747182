//! The ticks: `recover` runs, inferred from the events it writes (the ledger has no event
//! per run: SPEC 1.2 has `recover` write `classified` only on a change), their usual
//! period and the gaps where the loop was down; and the outcomes of exits per day.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;

use super::{Options, secs};
use crate::clock;
use crate::ledger::Ledgers;
use crate::model::{Body, GateBy};
use crate::outcome::Outcome;
use crate::wire::{DayJson, GapJson, TickJson, TicksJson};

/// Events of one run are less than this many seconds apart (a run's appends follow each
/// other within milliseconds, apart from a gate's run).
pub(crate) const RUN_WINDOW_SECS: i64 = 60;

/// Whether only `recover` writes this kind (`escalated` is also `resume`'s, `phantom`
/// also `verify`'s: those join a run but never make one alone).
fn recover_only(b: &Body) -> Option<bool> {
    match b {
        Body::Classified { .. }
        | Body::Wip { .. }
        | Body::Published { .. }
        | Body::Deleted { .. }
        | Body::Gate {
            by: GateBy::Recover,
            ..
        } => Some(true),
        Body::Escalated { .. } | Body::Phantom { .. } => Some(false),
        _ => None,
    }
}

/// The runs in the window, their median period, and the gaps longer than twice it (the
/// time since the last run included, ending `null`).
pub(crate) fn ticks(ledgers: &Ledgers, opts: &Options) -> TicksJson {
    let mut own: Vec<(Timestamp, bool, &str)> = ledgers
        .by_task
        .values()
        .flat_map(|l| l.entries.iter().map(move |e| (e, l.task.as_str())))
        .filter(|(e, _)| opts.since.is_none_or(|s| e.ts >= s))
        .filter_map(|(e, task)| recover_only(&e.event.body).map(|only| (e.ts, only, task)))
        .collect();
    own.sort();
    let mut runs: Vec<(Timestamp, Timestamp, u32, BTreeSet<&str>, bool)> = Vec::new();
    for (t, only, task) in own {
        match runs.last_mut() {
            Some(r) if secs(r.1, t) < RUN_WINDOW_SECS => {
                r.1 = t;
                r.2 += 1;
                r.3.insert(task);
                r.4 |= only;
            }
            _ => runs.push((t, t, 1, BTreeSet::from([task]), only)),
        }
    }
    runs.retain(|r| r.4);
    let starts: Vec<Timestamp> = runs.iter().map(|r| r.0).collect();
    let mut periods: Vec<i64> = starts.windows(2).map(|w| secs(w[0], w[1])).collect();
    periods.sort_unstable();
    let period = (!periods.is_empty()).then(|| periods[periods.len() / 2]);
    let mut gaps = Vec::new();
    if let Some(p) = period {
        for w in runs.windows(2) {
            let s = secs(w[0].1, w[1].0);
            if s > 2 * p {
                gaps.push(GapJson {
                    from: clock::whole_secs(w[0].1),
                    to: Some(clock::whole_secs(w[1].0)),
                    seconds: s,
                });
            }
        }
        if let Some(last) = runs.last() {
            let s = secs(last.1, opts.now);
            if s > 2 * p {
                gaps.push(GapJson {
                    from: clock::whole_secs(last.1),
                    to: None,
                    seconds: s,
                });
            }
        }
    }
    TicksJson {
        runs: runs
            .iter()
            .map(|r| TickJson {
                start: clock::whole_secs(r.0),
                end: clock::whole_secs(r.1),
                events: r.2,
                tasks: r.3.len() as u32,
            })
            .collect(),
        period_seconds: period,
        gaps,
    }
}

/// The five outcomes, in the SPEC's order.
pub(crate) const OUTCOMES: [Outcome; 5] = [
    Outcome::Success,
    Outcome::Failed,
    Outcome::Transient,
    Outcome::NeedsHuman,
    Outcome::Blocked,
];

/// Exits in the window counted by UTC day and outcome, oldest day first.
pub(crate) fn days(ledgers: &Ledgers, opts: &Options) -> Vec<DayJson> {
    let mut by_day: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    for e in ledgers.by_task.values().flat_map(|l| l.entries.iter()) {
        let Body::Exit { outcome, .. } = &e.event.body else {
            continue;
        };
        if opts.since.is_some_and(|s| e.ts < s) {
            continue;
        }
        let day = by_day
            .entry(e.ts.strftime("%Y-%m-%d").to_string())
            .or_insert_with(|| {
                OUTCOMES
                    .iter()
                    .map(|o| (o.as_str().to_string(), 0))
                    .collect()
            });
        *day.entry(outcome.as_str().to_string()).or_default() += 1;
    }
    by_day
        .into_iter()
        .map(|(date, outcomes)| DayJson { date, outcomes })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_ledgers as ledgers;

    fn classified() -> Body {
        Body::Classified {
            state: crate::model::State::HalfDone,
            action: crate::model::Action::Resume,
            reason: "r".into(),
            error: None,
        }
    }

    fn opts(now: &str) -> Options {
        Options {
            now: clock::parse(now).unwrap(),
            since: None,
            max_attempts: 3,
            base: "main".into(),
            remote_url: "<remote URL>".into(),
            at_hand: Default::default(),
        }
    }

    #[test]
    fn events_under_a_minute_apart_are_one_run_and_a_lone_escalation_is_none() {
        let l = ledgers(&[
            ("1", "2026-11-20T10:00:00Z", classified()),
            ("2", "2026-11-20T10:00:59Z", classified()),
            (
                "2",
                "2026-11-20T10:01:30Z",
                Body::Escalated { reason: "x".into() },
            ),
            ("1", "2026-11-20T10:05:00Z", classified()),
            // `resume` escalates too: alone, it is no tick.
            (
                "3",
                "2026-11-20T10:07:00Z",
                Body::Escalated {
                    reason: "capped".into(),
                },
            ),
            ("1", "2026-11-20T10:10:00Z", classified()),
            ("1", "2026-11-20T10:40:00Z", classified()),
        ]);
        let t = ticks(&l, &opts("2026-11-20T10:45:00Z"));
        let runs: Vec<(String, u32, u32)> = t
            .runs
            .iter()
            .map(|r| (clock::format_secs(r.start), r.events, r.tasks))
            .collect();
        assert_eq!(
            runs.iter()
                .map(|(s, e, t)| (s.as_str(), *e, *t))
                .collect::<Vec<_>>(),
            [
                ("2026-11-20T10:00:00Z", 3, 2),
                ("2026-11-20T10:05:00Z", 1, 1),
                ("2026-11-20T10:10:00Z", 1, 1),
                ("2026-11-20T10:40:00Z", 1, 1),
            ]
        );
        assert_eq!(clock::format_secs(t.runs[0].end), "2026-11-20T10:01:30Z");
        // Periods 300, 300, 1800: median 300; 10:10 to 10:40 is longer than twice it.
        assert_eq!(t.period_seconds, Some(300));
        assert_eq!(
            t.gaps,
            [GapJson {
                from: clock::parse("2026-11-20T10:10:00Z").unwrap(),
                to: Some(clock::parse("2026-11-20T10:40:00Z").unwrap()),
                seconds: 1800
            }]
        );
    }

    #[test]
    fn one_run_has_no_period_and_no_gap() {
        let l = ledgers(&[("1", "2026-11-20T10:00:00Z", classified())]);
        let t = ticks(&l, &opts("2026-11-25T00:00:00Z"));
        assert_eq!(t.runs.len(), 1);
        assert_eq!(t.period_seconds, None);
        assert!(t.gaps.is_empty());
    }
}
