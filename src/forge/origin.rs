//! The origin of a URL (scheme, host, port: RFC 6454), the only place a forge client sends
//! its token to (SPEC 1.2 "Untrusted input stays out"), and what a redirect or a message
//! makes of another one.

/// The origin of a URL (RFC 6454): scheme, host (lowercase) and port (the scheme's
/// default when none is written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Origin {
    /// `http` or `https`.
    pub(super) scheme: String,
    /// The host, lowercase.
    pub(super) host: String,
    /// The port, the scheme's default when none is written.
    pub(super) port: u16,
}

impl Origin {
    /// The origin of `url`, `None` when it is not an absolute `http(s)` URL with a host.
    pub(super) fn of(url: &str) -> Option<Origin> {
        let uri: ureq::http::Uri = url.parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default = match scheme.as_str() {
            "https" => 443,
            "http" => 80,
            _ => return None,
        };
        Some(Origin {
            host: uri.host()?.to_ascii_lowercase(),
            port: uri.port_u16().unwrap_or(default),
            scheme,
        })
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// `location` (absolute, or a path on `base`'s origin) as an absolute URL; `None` when it is
/// neither.
pub(super) fn resolve(base: &str, location: &str) -> Option<String> {
    if Origin::of(location).is_some() {
        return Some(location.to_string());
    }
    let origin = Origin::of(base)?;
    location.starts_with('/').then(|| {
        format!(
            "{}://{}:{}{location}",
            origin.scheme, origin.host, origin.port
        )
    })
}

/// The origin of `url` for a message (never its path or query, which may carry anything),
/// its text escaped; `an unreadable URL` when it has none.
pub(super) fn shown_origin(url: &str) -> String {
    Origin::of(url).map_or_else(
        || "an unreadable URL".to_string(),
        |o| crate::fence::inline(&o.to_string()),
    )
}
