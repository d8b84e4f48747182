//! What one GitHub answer says beyond its body: the headers read, whether and how long
//! to wait before a retry (5xx, rate limits, `retry-after`, `x-ratelimit-reset`), and the
//! error message of a failed request. Used by [`super::GitHub`]'s one request loop.

use std::time::Duration;

/// Retries after the first try.
pub(super) const RETRIES: u32 = 3;

/// The wait before retry `attempt` after a transport error, or an answer that names none:
/// 0.5 s doubling, capped at 4 s, no jitter. (A wait an answer names is capped at
/// `RECODE_FORGE_MAX_WAIT` by the request loop.)
pub(super) const TRANSPORT_PAUSE: crate::retry::Pause = crate::retry::Pause {
    first: Duration::from_millis(500),
    growth: crate::retry::Growth::Doubling,
    cap: Duration::from_secs(4),
    jitter: Duration::ZERO,
};

/// The response headers a request reads.
pub(super) struct Heads {
    /// `retry-after`, in seconds.
    retry_after: Option<u64>,
    /// `x-ratelimit-remaining`.
    remaining: Option<String>,
    /// `x-ratelimit-reset`, in seconds since the epoch.
    reset: Option<i64>,
    /// `link` (pagination).
    pub link: Option<String>,
    /// `etag`.
    pub etag: Option<String>,
}

impl Heads {
    /// Read them from `headers` (absent or not text: `None`).
    pub(super) fn of(headers: &ureq::http::HeaderMap) -> Heads {
        let header = |k: &str| {
            headers
                .get(k)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        Heads {
            retry_after: header("retry-after").and_then(|v| v.parse::<u64>().ok()),
            // GitHub's `x-ratelimit-*`, else GitLab's `ratelimit-*` (same meaning).
            remaining: header("x-ratelimit-remaining").or_else(|| header("ratelimit-remaining")),
            reset: header("x-ratelimit-reset")
                .or_else(|| header("ratelimit-reset"))
                .and_then(|v| v.parse::<i64>().ok()),
            link: header("link"),
            etag: header("etag"),
        }
    }
}

/// How long to wait before retrying an answer with `status`, `heads` and body `text` after
/// try `attempt`, or `None` when it is not retried (not a 5xx or rate limit, or retries
/// spent). A 403 that is not a rate limit is a permission error, not retried. `now` is
/// the clock in seconds since the epoch.
pub(super) fn retry_wait(
    status: u16,
    heads: &Heads,
    text: &str,
    attempt: u32,
    now: i64,
) -> Option<Duration> {
    // A 429 is a rate limit even without headers (GitLab may send none).
    let rate_limited = status == 429
        || (status == 403
            && (heads.retry_after.is_some()
                || heads.remaining.as_deref() == Some("0")
                || text.to_ascii_lowercase().contains("rate limit")));
    if !((status >= 500 || rate_limited) && attempt <= RETRIES) {
        return None;
    }
    Some(if let Some(s) = heads.retry_after {
        Duration::from_secs(s)
    } else if let (Some("0"), Some(reset)) = (heads.remaining.as_deref(), heads.reset) {
        Duration::from_secs((reset - now).max(0) as u64)
    } else if rate_limited {
        Duration::from_secs(60)
    } else {
        TRANSPORT_PAUSE.base(attempt)
    })
}

/// What a failed request's body may say when printed (SPEC 1.2: at most the JSON
/// `message`, never the body as it came): the forge's `message` and each of `errors`'
/// messages after `: `, passed through [`crate::redact::redact`] (token values, `Bearer …`,
/// `token …`, token shapes); a body that is not JSON with a `message` (an HTML error page
/// of a proxy, which may echo the request's headers) gives [`NO_MESSAGE`]. Every forge
/// client's error text goes through here.
pub(super) fn error_message(text: &str) -> String {
    let message = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| {
            // GitLab's `message` may be an array of strings.
            let mut m = match &v["message"] {
                serde_json::Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
                other => other.as_str()?.to_string(),
            };
            if let Some(errs) = v["errors"].as_array() {
                for e in errs {
                    if let Some(em) = e["message"].as_str() {
                        m.push_str(": ");
                        m.push_str(em);
                    }
                }
            }
            Some(m)
        });
    match message {
        Some(m) => crate::fence::inline(&crate::redact::redact(&m)),
        None => NO_MESSAGE.to_string(),
    }
}

/// The error message of an answer whose body carries no JSON `message`.
pub(super) const NO_MESSAGE: &str = "(no message: the answer was not the forge's JSON)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_json_message_is_kept_and_it_is_redacted() {
        assert_eq!(
            error_message(
                r#"{"message":"Validation Failed","errors":[{"message":"A pull request already exists"}]}"#
            ),
            "Validation Failed: A pull request already exists"
        );
        assert_eq!(
            error_message(
                "<html><pre>Authorization: Bearer ghp_0123456789abcdefghij0123456789abcdef</pre></html>"
            ),
            NO_MESSAGE
        );
        assert_eq!(
            error_message(r#"{"message":"bad header Bearer abcdefgh12345678\nHEAD"}"#),
            "bad header [REDACTED]\\nHEAD"
        );
    }
}
