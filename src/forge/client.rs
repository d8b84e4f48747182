//! The one HTTP request loop every forge client goes through (GitHub, GitLab,
//! Gitea/Forgejo): the token as a header, a timeout per request, retries with backoff on
//! 5xx, transport errors and rate limits (`retry-after`, `x-ratelimit-*` and GitLab's
//! `ratelimit-*`, read by [`super::http`]), conditional GETs with the ETags kept in
//! [`super::etag`] (a `304` answers the kept body), and pagination by `link: rel="next"`
//! (GitHub, GitLab and Gitea all send it). Error text goes through
//! [`super::http::error_message`], the one place that shapes a forge's error body.
//!
//! The token goes only to the API's own origin (scheme, host, port: SPEC 1.2 "Untrusted
//! input stays out"): ureq follows no redirect; a redirect within the origin is followed
//! here, one to another origin is refused (an error naming where it pointed), and a
//! `link: rel="next"` to another origin ends the listing with a warning. A request with its
//! retries and redirect hops ends within `recode.networkTimeout` in all: each try, and each
//! hop of a try, gets what is left of it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use jiff::Timestamp;

use super::ForgeError;
use super::etag::{Cache, Entry};
use super::http::{self, Heads, RETRIES};
use super::origin::{Origin, resolve, shown_origin};
use crate::model::Pr;

/// Most pages followed in one paginated read (a guard against a looping `link`).
const MAX_PAGES: usize = 1000;

/// Most redirects within the API's origin followed in one request.
const MAX_REDIRECTS: usize = 5;

/// The largest answer read, in bytes (ureq's default limit, named in the error).
pub(super) const MAX_BODY_BYTES: u64 = 10 * 1024 * 1024;

/// How long a client waits: each request, its retries and the waits between them included,
/// at most `timeout_secs` seconds (`recode.networkTimeout`), each wait before a retry at
/// most `max_wait_secs` seconds (`RECODE_FORGE_MAX_WAIT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Seconds a request may take, with its retries.
    pub timeout_secs: u64,
    /// Seconds the longest wait before a retry may last.
    pub max_wait_secs: u64,
}

impl Default for Limits {
    /// 30 s a request, 20 s the longest wait.
    fn default() -> Limits {
        Limits {
            timeout_secs: 30,
            max_wait_secs: 20,
        }
    }
}

impl Limits {
    /// The limits `opts` says.
    pub fn of(opts: &crate::config::ForgeOptions) -> Limits {
        Limits {
            timeout_secs: opts.timeout.as_secs(),
            max_wait_secs: opts.max_wait.as_secs(),
        }
    }
}

/// What one request got back.
pub(super) struct Answer {
    /// The `link` header (pagination).
    pub link: Option<String>,
    /// The body.
    pub text: String,
}

/// An HTTP client for one forge API: base URL, the auth header, fixed extra headers.
pub(super) struct Client {
    /// The forge's name in messages (`GitHub`, `GitLab`, `Gitea`).
    name: &'static str,
    agent: ureq::Agent,
    /// Base URL, no trailing slash.
    pub api: String,
    /// The auth header (name, value); the value holds the token and is never printed.
    auth: (&'static str, String),
    /// Headers sent on every request (media types, API versions).
    extra: Vec<(&'static str, &'static str)>,
    cache: Mutex<Cache>,
    /// The longest wait before one retry.
    max_wait: Duration,
    /// The longest a request may take, its retries included (`recode.networkTimeout`).
    timeout: Duration,
    /// The origin of `api`: the only one the token is sent to.
    origin: Option<Origin>,
    /// What the run should be told (a pagination link to another origin, refused).
    warnings: Mutex<Vec<String>>,
}

/// What one try of a request came to before its status is read.
enum Sent {
    /// An answer (not a redirect).
    Answer(ureq::http::Response<ureq::Body>),
    /// No answer: the transport failed.
    Lost(ureq::Error),
    /// Refused before sending the token where it does not belong.
    Refused(ForgeError),
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        write!(f, "Client({})", self.api)
    }
}

/// Epoch seconds now (the run's clock, `RECODE_NOW` included).
pub(super) fn now_secs() -> i64 {
    crate::clock::now().map(|t| t.as_second()).unwrap_or(0)
}

/// The ETag cache's key of a request: its URL, then `?k=v&…` of its query (unencoded).
fn cache_key(url: &str, query: &[(&str, &str)]) -> String {
    if query.is_empty() {
        url.to_string()
    } else {
        let q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{url}?{}", q.join("&"))
    }
}

impl Client {
    /// A client for forge `name`'s `api`, sending `auth` (header name, value) and `extra`
    /// on every request, within `limits`.
    pub(super) fn new(
        name: &'static str,
        api: &str,
        auth: (&'static str, String),
        extra: Vec<(&'static str, &'static str)>,
        limits: Limits,
    ) -> Client {
        let timeout = Duration::from_secs(limits.timeout_secs.max(1));
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            // Redirects are followed by `send`, within the API's origin only.
            .max_redirects(0)
            .http_status_as_error(false)
            .user_agent(concat!("git-recode/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Client {
            name,
            agent,
            api: api.trim_end_matches('/').to_string(),
            auth,
            extra,
            cache: Mutex::new(Cache::in_memory()),
            max_wait: Duration::from_secs(limits.max_wait_secs),
            timeout,
            origin: Origin::of(api),
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// Keep ETags and bodies in `path` between runs (read now, written by [`Client::save_cache`]).
    pub(super) fn set_cache(&mut self, path: std::path::PathBuf) {
        self.cache = Mutex::new(Cache::at(path));
    }

    /// Write the ETag cache if it changed; the run's warnings (a refused pagination link),
    /// and one when the cache cannot be written.
    pub(super) fn save_cache(&self) -> Vec<String> {
        let mut warnings =
            std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|p| p.into_inner()));
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        warnings.extend(cache.save(now_secs()));
        warnings
    }

    /// Whether `url` is on the API's own origin (the only one the token goes to).
    fn at_home(&self, url: &str) -> bool {
        self.origin.is_some() && Origin::of(url) == self.origin
    }

    /// The error of a request that ran out of `recode.networkTimeout`.
    fn late(&self, why: &str) -> ForgeError {
        ForgeError::Transport {
            forge: self.name,
            api: self.api.clone(),
            why: format!(
                "no answer within {} s (recode.networkTimeout), retries included: {why}",
                self.timeout.as_secs()
            ),
        }
    }

    fn cached(&self, key: &str) -> Option<Entry> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.get(key, now_secs())
    }

    fn remember(&self, key: &str, entry: Entry) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.put(key, entry);
    }

    /// One request with retries, all within `recode.networkTimeout`. `query` is added with
    /// ureq's query builder (encoded). A GET is conditional when an ETag for it is kept; a
    /// 304 answers the kept body.
    ///
    /// Errors: [`ForgeError::Transport`] when no answer came after the retries or within the
    /// timeout, for a redirect to another origin, and for an answer over 10 MB ("page over
    /// 10 MB"); [`ForgeError::Status`] for an answer of 300 or more (the body's message only).
    pub(super) fn call(
        &self,
        method: &str,
        url: &str,
        query: &[(&str, &str)],
        body: Option<&serde_json::Value>,
        what: &str,
    ) -> Result<Answer, ForgeError> {
        let deadline = Instant::now() + self.timeout;
        self.call_by(deadline, method, url, query, body, what)
    }

    /// [`Client::call`], ending by `deadline` (a paginated read's pages share one).
    fn call_by(
        &self,
        deadline: Instant,
        method: &str,
        url: &str,
        query: &[(&str, &str)],
        body: Option<&serde_json::Value>,
        what: &str,
    ) -> Result<Answer, ForgeError> {
        let key = cache_key(url, query);
        let kept = (method == "GET").then(|| self.cached(&key)).flatten();
        let policy = crate::retry::Policy {
            pause: http::TRANSPORT_PAUSE,
            limit: crate::retry::Limit::Until(deadline),
        };
        crate::retry::retry(policy, |attempt| {
            use crate::retry::Try;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Try::Fail(self.late("no time left for another try"));
            }
            tracing::debug!(method, url, attempt, "forge request");
            let lost = |why: String| ForgeError::Transport {
                forge: self.name,
                api: self.api.clone(),
                why,
            };
            let mut res = match self.send(method, url, query, body, kept.as_ref(), deadline) {
                Sent::Answer(r) => r,
                Sent::Refused(e) => return Try::Fail(e),
                Sent::Lost(ureq::Error::Timeout(t)) => return Try::Fail(self.late(&t.to_string())),
                Sent::Lost(e) if attempt > RETRIES => return Try::Fail(lost(e.to_string())),
                Sent::Lost(e) => return Try::Lost(lost(e.to_string())),
            };
            let status = res.status().as_u16();
            let heads = Heads::of(res.headers());
            if status == 304
                && let Some(e) = &kept
            {
                return Try::Done(Answer {
                    link: heads.link.or_else(|| e.link.clone()),
                    text: e.body.clone(),
                });
            }
            let text = match self.body(&mut res, status, attempt, what) {
                Ok(t) => t,
                Err(t) => return t,
            };
            let failed = || ForgeError::Status {
                forge: self.name,
                status,
                what: what.to_string(),
                message: http::error_message(&text),
            };
            if let Some(wait) = http::retry_wait(status, &heads, &text, attempt, now_secs()) {
                let left = deadline.saturating_duration_since(Instant::now());
                return Try::LostWait(wait.min(self.max_wait).min(left), failed());
            }
            if status >= 300 {
                return Try::Fail(failed());
            }
            if method == "GET"
                && let Some(etag) = heads.etag
            {
                let entry = Entry {
                    etag,
                    body: text.clone(),
                    link: heads.link.clone(),
                    used: now_secs(),
                };
                self.remember(&key, entry);
            }
            Try::Done(Answer {
                link: heads.link,
                text,
            })
        })
    }

    /// The body of an answer with `status` to try `attempt`, read up to [`MAX_BODY_BYTES`];
    /// else what the try comes to: a page over 10 MB or the timeout reached fail, another
    /// read error is lost (retried) while tries are left. An error status's unreadable body
    /// is empty.
    fn body(
        &self,
        res: &mut ureq::http::Response<ureq::Body>,
        status: u16,
        attempt: u32,
        what: &str,
    ) -> Result<String, crate::retry::Try<Answer, ForgeError>> {
        use crate::retry::Try;
        let lost = |why: String| ForgeError::Transport {
            forge: self.name,
            api: self.api.clone(),
            why,
        };
        match res
            .body_mut()
            .with_config()
            .limit(MAX_BODY_BYTES)
            .read_to_string()
        {
            Ok(t) => Ok(t),
            Err(ureq::Error::BodyExceedsLimit(_)) => Err(Try::Fail(lost(format!(
                "the answer to {what} is a page over {} MB: not read",
                MAX_BODY_BYTES >> 20
            )))),
            Err(ureq::Error::Timeout(t)) => Err(Try::Fail(self.late(&t.to_string()))),
            Err(_) if status >= 300 => Ok(String::new()),
            Err(e) if attempt > RETRIES => Err(Try::Fail(lost(e.to_string()))),
            Err(e) => Err(Try::Lost(lost(e.to_string()))),
        }
    }

    /// Send one try of a request by `deadline` (the step's: each redirect hop gets only
    /// what is left of it), following redirects that stay on the API's origin (at most
    /// [`MAX_REDIRECTS`]; a 303 turns a POST into a GET) and refusing one to any other
    /// origin, before the token could go there.
    fn send(
        &self,
        method: &str,
        url: &str,
        query: &[(&str, &str)],
        body: Option<&serde_json::Value>,
        kept: Option<&Entry>,
        deadline: Instant,
    ) -> Sent {
        let (mut method, mut url, mut query): (String, String, &[(&str, &str)]) =
            (method.to_string(), url.to_string(), query);
        for _ in 0..=MAX_REDIRECTS {
            if !self.at_home(&url) {
                return Sent::Refused(self.elsewhere(&url, "a request"));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Sent::Refused(self.late("no time left to follow a redirect"));
            }
            let res = match self.send_once(&method, &url, query, body, kept, left) {
                Ok(r) => r,
                Err(e) => return Sent::Lost(e),
            };
            let status = res.status().as_u16();
            let location = res
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let next = match (status, &location) {
                (301 | 302 | 303 | 307 | 308, Some(l)) => resolve(&url, l),
                _ => return Sent::Answer(res),
            };
            let Some(next) = next.filter(|n| self.at_home(n)) else {
                return Sent::Refused(
                    self.elsewhere(location.as_deref().unwrap_or(""), "a redirect"),
                );
            };
            if status == 303 {
                method = "GET".to_string();
            }
            url = next;
            // The location carries its own query.
            query = &[];
        }
        Sent::Refused(ForgeError::Transport {
            forge: self.name,
            api: self.api.clone(),
            why: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// The error of a request or redirect (`what`) to `url`, off the API's origin: refused,
    /// so the token never goes there.
    fn elsewhere(&self, url: &str, what: &str) -> ForgeError {
        ForgeError::Transport {
            forge: self.name,
            api: self.api.clone(),
            why: format!(
                "{what} to {} was refused: the token goes only to {}",
                shown_origin(url),
                self.origin
                    .as_ref()
                    .map_or_else(|| self.api.clone(), Origin::to_string)
            ),
        }
    }

    /// One HTTP exchange, no redirect followed: a POST with its JSON body, else a GET
    /// (conditional on `kept`'s ETag); each with the auth header and the extra headers, and
    /// `left` as its timeout.
    fn send_once(
        &self,
        method: &str,
        url: &str,
        query: &[(&str, &str)],
        body: Option<&serde_json::Value>,
        kept: Option<&Entry>,
        left: Duration,
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        match (method, body) {
            ("POST", Some(b)) => {
                let mut req = self
                    .agent
                    .post(url)
                    .config()
                    .timeout_global(Some(left))
                    .build()
                    .query_pairs(query.iter().copied())
                    .header(self.auth.0, &self.auth.1);
                for (k, v) in &self.extra {
                    req = req.header(*k, *v);
                }
                req.content_type("application/json")
                    .send(b.to_string().as_bytes())
            }
            _ => {
                let mut req = self
                    .agent
                    .get(url)
                    .config()
                    .timeout_global(Some(left))
                    .build()
                    .query_pairs(query.iter().copied())
                    .header(self.auth.0, &self.auth.1);
                for (k, v) in &self.extra {
                    req = req.header(*k, *v);
                }
                if let Some(e) = kept {
                    req = req.header("If-None-Match", &e.etag);
                }
                req.call()
            }
        }
    }

    /// `text` parsed as `T`.
    ///
    /// Errors: [`ForgeError::Transport`] naming `what` when it does not parse.
    pub(super) fn parse<T: serde::de::DeserializeOwned>(
        &self,
        text: &str,
        what: &str,
    ) -> Result<T, ForgeError> {
        serde_json::from_str(text).map_err(|e| ForgeError::Transport {
            forge: self.name,
            api: self.api.clone(),
            why: format!("unexpected answer to {what}: {e}"),
        })
    }

    /// Whether the issue at `url` (`…/issues/{number}`) is closed: GitHub, GitLab and
    /// Gitea/Forgejo all answer `"state": "closed"` (a blocker issue, SPEC `blocked`).
    ///
    /// Errors: [`ForgeError`] (a missing issue is a 404 error).
    pub(super) fn issue_closed(&self, url: &str) -> Result<bool, ForgeError> {
        let v: serde_json::Value = self.get(url, &[], "the blocker issue lookup")?;
        Ok(v["state"].as_str() == Some("closed"))
    }

    /// A GET parsed as `T`.
    ///
    /// Errors: as [`Client::call`] and [`Client::parse`].
    pub(super) fn get<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        query: &[(&str, &str)],
        what: &str,
    ) -> Result<T, ForgeError> {
        let a = self.call("GET", url, query, None, what)?;
        self.parse(&a.text, what)
    }

    /// Every page of a paginated GET (following `link: rel="next"` on the API's origin; a
    /// link to another origin ends the listing with a warning), each parsed as `T`;
    /// `more(page)` says whether to go on after it. All pages share one
    /// `recode.networkTimeout`.
    ///
    /// Errors: as [`Client::call`] and [`Client::parse`].
    pub(super) fn pages<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        query: &[(&str, &str)],
        what: &str,
        mut more: impl FnMut(&T) -> bool,
    ) -> Result<Vec<T>, ForgeError> {
        let mut out = Vec::new();
        // Every page of one listing within one `recode.networkTimeout`.
        let deadline = Instant::now() + self.timeout;
        let mut answer = self.call_by(deadline, "GET", url, query, None, what)?;
        for _ in 0..MAX_PAGES {
            let page: T = self.parse(&answer.text, what)?;
            let go_on = more(&page);
            out.push(page);
            match answer.link.as_deref().and_then(next_link) {
                Some(next) if go_on && self.at_home(&next) => {
                    answer = self.call_by(deadline, "GET", &next, &[], None, what)?;
                }
                Some(next) if go_on => {
                    let w = format!(
                        "{}: {what} ends at page {}: its next page is on {}, and the token goes only to {}",
                        self.name,
                        out.len(),
                        shown_origin(&next),
                        self.origin
                            .as_ref()
                            .map_or_else(|| self.api.clone(), Origin::to_string)
                    );
                    tracing::debug!("{w}");
                    self.warnings
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(w);
                    break;
                }
                _ => break,
            }
        }
        Ok(out)
    }

    /// Every item of every page of a paginated GET answering a JSON array.
    ///
    /// Errors: as [`Client::pages`].
    pub(super) fn all<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        query: &[(&str, &str)],
        what: &str,
    ) -> Result<Vec<T>, ForgeError> {
        Ok(self
            .pages::<Vec<T>>(url, query, what, |_| true)?
            .into_iter()
            .flatten()
            .collect())
    }
}

/// A forge's pull/merge request as listed, newest first, with its opening time.
pub(super) trait Opened {
    /// `created_at` as the forge wrote it (RFC 3339), if it did.
    fn created_at(&self) -> Option<&str>;

    /// Opened before `cutoff` (unknown or unreadable dates are not).
    fn created_before(&self, cutoff: Timestamp) -> bool {
        self.created_at()
            .and_then(|t| t.parse::<Timestamp>().ok())
            .is_some_and(|t| t < cutoff)
    }
}

/// The `more` of [`Client::pages`] for a listing sorted newest first: go on while the
/// page's oldest item was opened at or after `since` less [`super::CUTOFF_SLACK_SECS`]
/// (a day, for clock skew and late pushes); every page with `since` `None`.
pub(super) fn opened_since<T: Opened>(since: Option<Timestamp>) -> impl FnMut(&Vec<T>) -> bool {
    let cutoff = since.map(|t| crate::clock::from_secs(t.as_second() - super::CUTOFF_SLACK_SECS));
    move |page| match (cutoff, page.last()) {
        (Some(c), Some(oldest)) => !oldest.created_before(c),
        _ => true,
    }
}

/// What a POST opening a pull/merge request comes to: the request it `opened`, or, when the
/// forge answered 409 (one is open for the branch already: GitLab, Gitea), the one
/// `existing` finds; a 409 with none found stays the error.
///
/// Errors: `posted`'s error, or those of `opened` and `existing`.
pub(super) fn opened_or_existing(
    posted: Result<Answer, ForgeError>,
    opened: impl FnOnce(Answer) -> Result<Pr, ForgeError>,
    existing: impl FnOnce() -> Result<Option<Pr>, ForgeError>,
) -> Result<Pr, ForgeError> {
    match posted {
        Ok(a) => opened(a),
        Err(e @ ForgeError::Status { status: 409, .. }) => existing()?.ok_or(e),
        Err(e) => Err(e),
    }
}

/// The `rel="next"` URL of a `link` header (RFC 8288, parsed by `parse_link_header`);
/// `None` when there is none or the header does not parse (pagination then stops at this
/// page, as on the last one).
pub(crate) fn next_link(link: &str) -> Option<String> {
    parse_link_header::parse_with_rel(link)
        .ok()?
        .remove("next")
        .map(|l| l.raw_uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_header() {
        let h = r#"<https://api.github.com/repositories/3003/pulls?state=all&per_page=100&page=2>; rel="next", <https://api.github.com/repositories/3003/pulls?state=all&per_page=100&page=4>; rel="last""#;
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repositories/3003/pulls?state=all&per_page=100&page=2")
        );
        assert_eq!(next_link(r#"<https://x/p?page=4>; rel="last""#), None);
        // GitLab's order and unquoted values parse too; an unparsable header is no next page.
        let gitlab = r#"<https://gitlab.example/api/v4/projects/8/merge_requests?page=1&per_page=3>; rel="prev", <https://gitlab.example/api/v4/projects/8/merge_requests?page=3&per_page=3>; rel=next"#;
        assert_eq!(
            next_link(gitlab).as_deref(),
            Some("https://gitlab.example/api/v4/projects/8/merge_requests?page=3&per_page=3")
        );
        assert_eq!(next_link("garbage; rel"), None);
    }
}
