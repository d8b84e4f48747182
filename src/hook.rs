//! The post-commit milestone hook: a commit whose message carries a `Recode-Phase:`
//! trailer is ledgered as a `milestone` event (SPEC "milestone").

use gix::ObjectId;

/// The trailer that marks a milestone commit.
pub const PHASE_TRAILER: &str = "Recode-Phase";
/// Environment variable carrying the agent's session id into the hook.
pub const SESSION_ENV: &str = "RECODE_SESSION_ID";

/// Trailers of a commit message, parsed the way git does: the last paragraph, when every
/// non-continuation line in it is `Key: value`. Returns `(key, value)` pairs in order.
pub fn trailers(message: &str) -> Vec<(String, String)> {
    let body = message.trim_end();
    let para = match body.rfind("\n\n") {
        Some(i) => &body[i + 2..],
        None => return Vec::new(), // a subject alone has no trailers
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for line in para.lines() {
        if line.starts_with(char::is_whitespace) {
            if let Some(last) = out.last_mut() {
                last.1.push(' ');
                last.1.push_str(line.trim());
                continue;
            }
            return Vec::new();
        }
        let Some((k, v)) = line.split_once(':') else {
            return Vec::new();
        };
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Vec::new();
        }
        out.push((k.to_string(), v.trim().to_string()));
    }
    out
}

/// The phase a commit message declares (the last `Recode-Phase:` trailer), if any.
pub fn phase_of(message: &str) -> Option<String> {
    trailers(message)
        .into_iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(PHASE_TRAILER))
        .map(|(_, v)| v)
        .rfind(|v| !v.is_empty())
}

/// The commit HEAD points to and its message.
pub fn head_commit(repo: &gix::Repository) -> Option<(ObjectId, String)> {
    let id = repo.head_id().ok()?.detach();
    let commit = repo.find_commit(id).ok()?;
    let msg = commit.message_raw().ok()?.to_string();
    Some((id, msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_like_git() {
        assert_eq!(
            phase_of("add x\n\nRecode-Phase: scoped\n"),
            Some("scoped".into())
        );
        assert_eq!(
            phase_of("add x\n\nbody text\n\nSigned-off-by: a <a@b>\nRecode-Phase: tests-green"),
            Some("tests-green".into())
        );
        // Not in the last paragraph: not a trailer.
        assert_eq!(
            phase_of("add x\n\nRecode-Phase: scoped\n\nmore prose here"),
            None
        );
        // A subject alone has no trailers.
        assert_eq!(phase_of("Recode-Phase: scoped"), None);
        // A paragraph with prose is not a trailer block.
        assert_eq!(phase_of("x\n\nsee Recode-Phase: scoped\nfor details"), None);
    }
}
