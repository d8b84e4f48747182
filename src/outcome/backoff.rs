//! The wait after a transient exit whose message names no reset (SPEC "Outcomes:
//! reading how an attempt ended"): 5 minutes, doubled for each consecutive transient
//! exit of the task, at most 6 hours.

use crate::outcome::Outcome;

/// The first wait, in seconds (5 minutes).
pub(crate) const BASE_SECS: i64 = 5 * 60;

/// The longest wait, in seconds (6 hours).
pub(crate) const MAX_SECS: i64 = 6 * 3600;

/// The wait in seconds after the `streak`-th consecutive transient exit (counting the
/// exit being recorded: 1 → 5 min, 2 → 10 min, 3 → 20 min, …, at most 6 h). A streak
/// of 0 is taken as 1.
pub(crate) fn backoff_secs(streak: u32) -> i64 {
    let doublings = streak.max(1) - 1;
    if doublings >= 16 {
        return MAX_SECS;
    }
    (BASE_SECS << doublings).min(MAX_SECS)
}

/// How many exits at the end of `previous` (the task's earlier exit outcomes, oldest
/// first) are transient, plus one for the transient exit being recorded.
pub(crate) fn transient_streak(previous: &[Outcome]) -> u32 {
    let trailing = previous
        .iter()
        .rev()
        .take_while(|o| **o == Outcome::Transient)
        .count();
    u32::try_from(trailing)
        .unwrap_or(u32::MAX)
        .saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_five_minutes_up_to_six_hours() {
        let waits: Vec<i64> = (0..=10).map(backoff_secs).collect();
        assert_eq!(
            waits,
            vec![
                300, 300, 600, 1200, 2400, 4800, 9600, 19200, 21600, 21600, 21600
            ]
        );
        assert_eq!(backoff_secs(u32::MAX), 21600);
    }

    #[test]
    fn streak_counts_trailing_transient_exits_and_this_one() {
        use Outcome::*;
        assert_eq!(transient_streak(&[]), 1);
        assert_eq!(transient_streak(&[Failed]), 1);
        assert_eq!(transient_streak(&[Transient]), 2);
        assert_eq!(
            transient_streak(&[Transient, Failed, Transient, Transient]),
            3
        );
        assert_eq!(transient_streak(&[Success, Transient]), 2);
    }
}
