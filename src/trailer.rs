//! Commit-message trailers git-recode reads and writes (`Recode-Phase:`, `Recode-Wip:`),
//! parsed by gix-object the way `git interpret-trailers --parse` does. A leaf module: it
//! depends on nothing else in the crate.

/// The trailer that marks a milestone commit.
pub(crate) const PHASE_TRAILER: &str = "Recode-Phase";

/// The trailer git-recode's WIP snapshots carry (`Recode-Wip: true`).
pub(crate) const WIP_TRAILER: &str = "Recode-Wip";

/// Trailers of a commit message, parsed as `git interpret-trailers --parse` does (by
/// gix-object: the last paragraph, continuation lines unfolded, git's 25% rule for blocks
/// mixing prose and trailers). Returns `(key, value)` pairs in order; none for a subject
/// alone.
pub(crate) fn trailers(message: &str) -> Vec<(String, String)> {
    use gix::bstr::ByteSlice;
    let Some(body) = gix::objs::commit::MessageRef::from_bytes(message.as_bytes()).body() else {
        return Vec::new();
    };
    body.trailers()
        .map(|t| {
            (
                t.token.to_str_lossy().into_owned(),
                t.value.to_str_lossy().into_owned(),
            )
        })
        .collect()
}

/// Whether a commit message is a git-recode WIP snapshot (a `Recode-Wip: true` trailer).
pub(crate) fn is_wip(message: &str) -> bool {
    trailers(message)
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case(WIP_TRAILER) && v.eq_ignore_ascii_case("true"))
}

/// The phase a commit message declares (the last `Recode-Phase:` trailer), if any.
pub(crate) fn phase_of(message: &str) -> Option<String> {
    trailers(message)
        .into_iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(PHASE_TRAILER))
        .map(|(_, v)| v)
        .rfind(|v| !v.is_empty())
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
        // A folded value is unfolded, as `git interpret-trailers --parse` does.
        assert_eq!(
            trailers("x\n\nRecode-Phase: tests\n  green\n"),
            vec![("Recode-Phase".to_string(), "tests green".to_string())]
        );
        assert!(is_wip(
            "wip: recode snapshot (2 files)\n\nRecode-Wip: true\n"
        ));
        assert!(!is_wip("wip\n\nRecode-Wip: false\n"));
        assert!(!is_wip("mention Recode-Wip: true in prose"));
    }
}
