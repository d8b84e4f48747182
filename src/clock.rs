//! Time: the clock (`RECODE_NOW` replaces it, SPEC "Time"), RFC 3339 formatting
//! with millisecond precision, and `recode.stallAfter` durations.

use jiff::Timestamp;

/// Environment variable that replaces the clock everywhere (RFC 3339), for tests and replays.
pub(crate) const NOW_ENV: &str = "RECODE_NOW";

/// Errors of this module.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    /// `RECODE_NOW` or a ledger timestamp is not RFC 3339.
    #[error("'{value}' is not an RFC 3339 timestamp (like 2026-11-29T12:00:00Z)")]
    BadTimestamp {
        /// The offending text.
        value: String,
    },
    /// A duration such as `recode.stallAfter` could not be read.
    #[error("'{value}' is not a duration (a number followed by s, m, h or d, like 30m)")]
    BadDuration {
        /// The offending text.
        value: String,
    },
}

impl ClockError {
    /// What the user can do about it (shown under the error), when there is something.
    pub fn hint(&self) -> Option<String> {
        match self {
            ClockError::BadTimestamp { .. } => Some(
                "set RECODE_NOW to an RFC 3339 time such as 2026-11-29T12:00:00Z, or unset it"
                    .into(),
            ),
            ClockError::BadDuration { .. } => None,
        }
    }
}

/// The current time: `RECODE_NOW` when set, else the system clock.
///
/// Errors: [`ClockError::BadTimestamp`] when `RECODE_NOW` is set but not RFC 3339.
pub(crate) fn now() -> Result<Timestamp, ClockError> {
    match std::env::var(NOW_ENV) {
        Ok(v) if !v.trim().is_empty() => parse(&v),
        _ => Ok(Timestamp::now()),
    }
}

/// Parse an RFC 3339 timestamp (any offset).
///
/// Errors: [`ClockError::BadTimestamp`].
pub(crate) fn parse(value: &str) -> Result<Timestamp, ClockError> {
    value
        .trim()
        .parse::<Timestamp>()
        .map_err(|_| ClockError::BadTimestamp {
            value: value.to_string(),
        })
}

/// Format as RFC 3339 UTC with millisecond precision: `2026-11-29T12:00:00.000Z`.
pub(crate) fn format(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Format as RFC 3339 UTC with second precision (for `retry_after`, `last_activity`).
pub(crate) fn format_secs(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `ts` cut to whole seconds (what [`format_secs`] writes), for times compared and
/// sorted as the report shows them.
pub(crate) fn whole_secs(ts: Timestamp) -> Timestamp {
    from_secs(ts.as_second())
}

/// Timestamp from whole seconds since the Unix epoch; out-of-range values clamp.
pub(crate) fn from_secs(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap_or(if secs < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

/// Parse a duration like `30m`, `90s`, `2h`, `1d` (a bare number is seconds) into seconds.
///
/// Errors: [`ClockError::BadDuration`].
pub(crate) fn parse_duration(value: &str) -> Result<i64, ClockError> {
    let v = value.trim();
    let bad = || ClockError::BadDuration {
        value: value.to_string(),
    };
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&v[..i], v[i..].trim()),
        None => (v, "s"),
    };
    let n: i64 = num.parse().map_err(|_| bad())?;
    let mult = match unit {
        "s" | "sec" | "secs" => 1,
        "m" | "min" | "mins" => 60,
        "h" | "hr" | "hrs" => 3600,
        "d" | "day" | "days" => 86_400,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// Render a span of seconds the way a human reads idle time: `45s`, `12m`, `3h`, `2d`.
pub(crate) fn human_secs(secs: i64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 2 * 3600 => format!("{}m", s / 60),
        s if s < 2 * 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30m").unwrap(), 1800);
        assert_eq!(parse_duration("90").unwrap(), 90);
        assert_eq!(parse_duration("2h").unwrap(), 7200);
        assert_eq!(parse_duration("1d").unwrap(), 86400);
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5w").is_err());
    }

    #[test]
    fn formats_with_millis() {
        let t = parse("2026-11-29T12:00:00+01:00").unwrap();
        assert_eq!(format(t), "2026-11-29T11:00:00.000Z");
        assert_eq!(format_secs(t), "2026-11-29T11:00:00Z");
    }
}

/// Serde for a time written as [`format_secs`] (`2026-11-20T09:50:00Z`, whole seconds, UTC):
/// the report's times are typed inside and text only in the document.
pub(crate) mod secs {
    use jiff::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    /// Write `ts` as [`super::format_secs`].
    pub(crate) fn serialize<S: Serializer>(ts: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_secs(*ts))
    }

    /// Read an RFC 3339 time. Errors: the text is no time.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        super::parse(&String::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// [`secs`] for an optional time (`null` when `None`).
pub(crate) mod secs_opt {
    use jiff::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    /// Write `ts` as [`super::format_secs`], or null.
    pub(crate) fn serialize<S: Serializer>(
        ts: &Option<Timestamp>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match ts {
            Some(t) => s.serialize_str(&super::format_secs(*t)),
            None => s.serialize_none(),
        }
    }

    /// Read an RFC 3339 time or null. Errors: the text is no time.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Timestamp>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| super::parse(&t).map_err(D::Error::custom))
            .transpose()
    }
}
