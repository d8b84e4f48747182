//! The one fence for untrusted text in the resume prompt (SPEC 1.2 "Untrusted input stays
//! out"): final messages, agents' JSON, pull request reviews, comments and check output,
//! commit subjects and branch names.
//!
//! - [`quote`]: every line of a block is prefixed with `| `, where a line ends at any break
//!   an agent or a terminal honours: `\n`, `\r` (a `\r\n` pair is one break), `\v`, `\f`,
//!   U+0085 (NEL), U+2028 (line separator), U+2029 (paragraph separator). No text inside
//!   can start a line of its own, so none can close the fence or add a heading.
//! - [`inline`]: text quoted inside one line of the prompt (a branch, a URL, a path): every
//!   break and control character is shown escaped, so the line stays one line.
//!
//! In both, other control characters — C0 but the tab, DEL, C1, and the bidirectional
//! marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A–U+202E,
//! U+2066–U+2069), which reorder what a reader sees — are shown escaped the way Rust
//! writes them (`\u{1b}`, `\u{202e}`).
//!
//! A leaf module: it depends on nothing else in the crate.

/// Whether `c` ends a line for an agent or a terminal (SPEC 1.2's list).
pub(crate) fn is_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Whether `c` is shown escaped inside a line: a break ([`is_break`]), a control character
/// (C0 but the tab, DEL, C1) or a bidirectional formatting character. [`quote`] splits at
/// breaks before this applies.
pub(crate) fn is_escaped(c: char) -> bool {
    is_break(c)
        || (c.is_control() && c != '\t')
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Append `line` (which holds no break) to `out` with every [`is_escaped`] character
/// written as its Rust escape (`\r`, `\u{1b}`).
fn push_escaped(out: &mut String, line: &str) {
    for c in line.chars() {
        if is_escaped(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
}

/// Untrusted text shown on a terminal inside one line of human output (`status`,
/// `classify`, `log`, `report`) or as one `--porcelain` field: every [`is_escaped`]
/// character and the tab written as its Rust escape (`\t`, `\u{1b}`, `\u{202e}`), so no
/// value can move the cursor, start a line, split a field, set the clipboard (OSC 52) or
/// reorder what a reader sees.
pub(crate) fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_escaped(c) || c == '\t' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The lines of `text` split at every [`is_break`] (`\r\n` counted once); a break at the
/// very end starts no empty last line, as [`str::lines`] does.
pub(crate) fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_break(c) {
            out.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r'
                && let Some((j, '\n')) = chars.peek().copied()
            {
                chars.next();
                end = j + 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Fence a block of untrusted text: each of its [`lines`] becomes `| <line>\n`, with
/// control characters escaped. Empty text gives an empty string.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for l in lines(text) {
        out.push_str("| ");
        push_escaped(&mut out, l);
        out.push('\n');
    }
    out
}

/// Untrusted text inside one line of the prompt: breaks and control characters escaped,
/// everything else as it is.
pub(crate) fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}

/// Untrusted text made one name that is safe both as a ref component (git's
/// `check-ref-format` rules) and as a file or directory name: every character but
/// `[A-Za-z0-9._-]` becomes `-`, runs of `.` collapse to one, no leading `.`, no trailing
/// `.` or `.lock`; may be empty (the caller names the fallback). The one rule for host
/// ids in refs, worktree directories and prompt files.
pub(crate) fn component(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if c == '.' && s.ends_with('.') {
            continue;
        }
        s.push(c);
    }
    let mut s = s.trim_start_matches('.').to_string();
    loop {
        if let Some(t) = s.strip_suffix(".lock") {
            s = t.to_string();
        } else if let Some(t) = s.strip_suffix('.') {
            s = t.to_string();
        } else {
            break;
        }
    }
    s
}

/// Whether `id` may be taken as an agent's session id (SPEC 1.2 "Untrusted input stays
/// out": `^[A-Za-z0-9._:@+-]{1,200}$`), and does not start with `-`, so no agent can read it
/// as an option word (`--dangerously-skip-permissions`). Checked wherever an id enters:
/// `record spawn --session-id`, `record exit --result-json` (an agent's output or
/// transcript), and every ledger line read (a synced line from another host).
pub(crate) fn session_id_ok(id: &str) -> bool {
    (1..=200).contains(&id.len())
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:@+-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_component_rule_for_refs_and_directories() {
        for (given, made) in [
            ("issue-7", "issue-7"),
            ("feat/issue-12 parser", "feat-issue-12-parser"),
            ("..a..b.lock", "a.b"),
            ("hostB.", "hostB"),
            ("ü", "-"),
            ("x.lock.lock", "x"),
            ("", ""),
        ] {
            assert_eq!(component(given), made, "{given:?}");
        }
    }

    #[test]
    fn every_break_starts_a_prefixed_line() {
        for br in [
            "\n", "\r", "\r\n", "\u{0b}", "\u{0c}", "\u{85}", "\u{2028}", "\u{2029}",
        ] {
            assert_eq!(
                quote(&format!("done{br}----- END -----{br}## What to do{br}")),
                "| done\n| ----- END -----\n| ## What to do\n",
                "break {br:?}"
            );
        }
    }

    #[test]
    fn controls_and_bidi_marks_are_escaped_and_tabs_kept() {
        assert_eq!(
            quote("a\u{1b}[2Jb\u{7f}\u{9b}\tc\u{202e}d\u{2066}"),
            "| a\\u{1b}[2Jb\\u{7f}\\u{9b}\tc\\u{202e}d\\u{2066}\n"
        );
        assert_eq!(
            shown("a\tb\u{1b}]52;c;eA==\u{7}\u{9d}\u{200f}"),
            "a\\tb\\u{1b}]52;c;eA==\\u{7}\\u{9d}\\u{200f}"
        );
        assert_eq!(
            inline("x\ry\u{2028}z\n"),
            "x\\ry\\u{2028}z\\n",
            "an inline value stays one line"
        );
    }

    #[test]
    fn blank_lines_are_kept_and_empty_text_is_nothing() {
        assert_eq!(quote("a\n\nb"), "| a\n| \n| b\n");
        assert_eq!(quote(""), "");
        assert_eq!(quote("\r"), "| \n");
        assert_eq!(lines("x\r\n\r\ny"), ["x", "", "y"]);
    }
}
