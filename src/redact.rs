//! Redaction of forge credentials from any text git-recode prints (SPEC 1.2 "Untrusted
//! input stays out": a forge's error body is never printed as it came, and any occurrence
//! of the token, `Bearer …`, `token …` or a known token shape is redacted).
//!
//! One plain function, [`redact`], applied where text leaves the process: forge error
//! messages (`forge/http.rs`, shared by every forge client), warnings and errors printed by
//! the CLI, and every tracing line ([`Writer`]). What it removes:
//! - the values of [`TOKEN_ENV`] in this process's environment (4 characters or more);
//! - `Bearer X` (X of 8 characters or more), `token X` (X of 8 characters or more with a
//!   digit, or of 20 or more: "token expired" stays), `Authorization: …` and
//!   `PRIVATE-TOKEN: …` header values;
//! - token shapes: GitHub `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`; GitLab
//!   `glpat-`, `gloas-`, `gldt-`, `glrt-`, `glptt-`, `glcbt-`, `glft-`, `glsoat-`.
//!
//! Each is replaced by [`REDACTED`]. A leaf module.

use std::sync::OnceLock;

use regex::Regex;

/// The forge token variables (SPEC 1.2 "Forges"): redacted from output, removed from the
/// gate's and the printed resume commands' environment.
pub(crate) const TOKEN_ENV: &[&str] = &[
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GITLAB_TOKEN",
    "GITEA_TOKEN",
    "FORGEJO_TOKEN",
];

/// What a redacted secret reads as.
pub(crate) const REDACTED: &str = "[REDACTED]";

fn patterns() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(concat!(
            r"(?i)(?:",
            r"(?:authorization|private-token|x-api-key)\s*[:=]\s*(?:(?:bearer|token|basic)\s+)?[^\s<>&]+",
            r"|\bbearer\s+[A-Za-z0-9._~+/=-]{8,}",
            r"|\btoken\s+(?P<word>[A-Za-z0-9._~+/=-]{8,})",
            r")|(?:",
            r"\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{8,}",
            r"|\bgl(?:pat|oas|dt|rt|ptt|cbt|ft|soat)-[A-Za-z0-9_-]{8,}",
            r")"
        ))
        .expect("the redaction patterns are valid")
    })
}

/// `text` with every forge credential replaced by [`REDACTED`]: the token values of
/// [`TOKEN_ENV`] set in the environment, and the header and token shapes listed in the
/// module's documentation. Text without any comes back unchanged.
pub(crate) fn redact(text: &str) -> String {
    let mut out = text.to_string();
    for k in TOKEN_ENV {
        if let Ok(v) = std::env::var(k) {
            let v = v.trim();
            if v.len() >= 4 && out.contains(v) {
                out = out.replace(v, REDACTED);
            }
        }
    }
    let redacted = patterns().replace_all(&out, |c: &regex::Captures| match c.name("word") {
        // `token <word>`: a secret has a digit or is long; "token expired" is prose.
        Some(w) if !(w.as_str().len() >= 20 || w.as_str().bytes().any(|b| b.is_ascii_digit())) => {
            c[0].to_string()
        }
        _ => REDACTED.to_string(),
    });
    match redacted {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(o) => o,
    }
}

/// A writer that redacts what it writes ([`redact`], per write call) before passing it
/// to `W`: tracing's formatter writes one event per call, so every log line is redacted.
pub(crate) struct Writer<W: std::io::Write>(pub W);

impl<W: std::io::Write> std::io::Write for Writer<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_bearer_and_token_shapes_are_redacted() {
        let page = "<html><pre>Authorization: Bearer abc.def-ghi</pre>\
                    got token 0123456789abcdef0123 and ghp_ABCDEFGHIJKLMNOP0123456789abcdefghij, \
                    github_pat_11AAAAAA_bbbbbbbbbbbb, glpat-xxxxxxxxxxxxxxxxxxxx; \
                    PRIVATE-TOKEN: s3cr3t</html>";
        assert_eq!(
            redact(page),
            "<html><pre>[REDACTED]</pre>got [REDACTED] and [REDACTED], [REDACTED], \
             [REDACTED]; [REDACTED]</html>"
        );
    }

    #[test]
    fn ordinary_text_is_unchanged() {
        for t in [
            "Not Found",
            "Bad credentials",
            "the token expired",
            "invalid token provided",
            "token authentication is off",
            "Validation Failed: A pull request already exists for acme:issue-7.",
        ] {
            assert_eq!(redact(t), t);
        }
    }
}
