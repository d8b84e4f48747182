//! A WIP push the remote refused for file size: our own WIP commit is rewritten without
//! the files the remote named, which stay on disk and are left out (SPEC 1.2 "Never lose
//! work: more states": a file the remote cannot take is left out of the WIP commit;
//! `recode.wipMaxFileSize` is only a local guess at the remote's limit, and remotes differ).
//!
//! What a refusal names, as remotes word it (stderr of `git push`):
//! - GitHub (GH001): `remote: error: File bin/x is 347.89 MB; this exceeds GitHub's file
//!   size limit of 100.00 MB`;
//! - a generic pre-receive hook: `remote: error: File bin/x exceeds the file size limit`;
//! - GitLab push rules: `remote: GitLab: File "bin/x" is larger than the allowed size of 5 MiB`;
//! - GitLab's per-file limit names blobs, not paths: `You are attempting to check in one or
//!   more files which exceed the 100MiB limit:` then `- <40-hex blob id> (123 MiB)`.
//!
//! Only the commit this step just made is rewritten (the branch tip, `Recode-Wip: true`, on
//! no remote: the push was refused), and only for paths it added; a path the agent
//! committed itself is never rewritten away.

use std::path::Path;
use std::time::Duration;

use crate::git::{self, GitError};

/// Whether a push's stderr reads as a refusal for size (a file or blob over a limit).
pub(super) fn size_refusal(stderr: &str) -> bool {
    let s = stderr.to_ascii_lowercase();
    s.contains("exceed") || s.contains("larger than") || s.contains("large file")
}

/// The paths among `added` (path, blob id) that the refusal in `stderr` names: by path
/// after the word `file` (bare, or in `"` or `'` quotes), or by full blob id. Sorted, each
/// once; empty when the refusal names none of them.
pub(super) fn named(stderr: &str, added: &[(String, String)]) -> Vec<String> {
    let lower = stderr.to_ascii_lowercase();
    let mut out: Vec<String> = added
        .iter()
        .filter(|(path, oid)| lower.contains(&oid.to_ascii_lowercase()) || names_path(stderr, path))
        .map(|(p, _)| p.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `File <path>` or `File "<path>"` in `stderr` (case-insensitive `file`), with the path
/// ending at a space, a quote, `;`, `:`, `,` or the end of the line.
fn names_path(stderr: &str, path: &str) -> bool {
    stderr.lines().any(|line| {
        let lower = line.to_ascii_lowercase();
        lower.match_indices("file ").any(|(i, m)| {
            let rest = &line[i + m.len()..];
            let rest = rest.trim_start_matches(['"', '\'', '`']);
            rest.strip_prefix(path).is_some_and(|after| {
                after.is_empty() || after.starts_with([' ', '"', '\'', '`', ';', ':', ','])
            })
        })
    })
}

/// The regular files (path, blob id) that commit `head` adds against its first parent
/// (`diff-tree -r --no-renames`, status `A`): only a path new in our WIP commit is taken
/// out of it (taking out a changed one would record its deletion, and the parent's version
/// would still be pushed); empty for a root commit.
///
/// Each git run is killed past `timeout` (`recode.commandTimeout`).
///
/// Errors: [`GitError`] when the diff cannot be read.
pub(super) fn added_by(
    dir: &Path,
    head: gix::ObjectId,
    timeout: Duration,
) -> Result<Vec<(String, String)>, GitError> {
    let raw = git::Git::read(dir, timeout)
        .args([
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--no-abbrev",
            "--no-commit-id",
        ])
        .arg(format!("{head}^"))
        .arg(head.to_string())
        .output()?;
    // `-z --raw`: `:oldmode newmode oldid newid status\0path\0`.
    let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut out = Vec::new();
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(['\n', ':']).split(' ').collect();
        if parts.len() >= 5 && parts[1].starts_with("100") && parts[4] == "A" {
            out.push((
                String::from_utf8_lossy(path).to_string(),
                parts[3].to_string(),
            ));
        }
    }
    Ok(out)
}

/// Rewrite our WIP commit `head` on `branch` without `paths`: a commit with the same
/// parent and a tree without them (built in a temporary index of git-recode's own), or the
/// parent itself when nothing else is left; then one compare-and-swap of the branch from
/// `head`, and only then the worktree's index loses the paths (the files stay on disk,
/// untracked). Returns the new tip and how many files it changes.
///
/// A kill at any point leaves the branch at `head` or at the rewrite (one ref update); a
/// kill before the index step leaves the paths staged, which the next WIP step commits and
/// this rewrite takes out again. Each git run is killed past `timeout`
/// (`recode.commandTimeout`; the commit sooner, [`git::Git::commit_step`]).
///
/// Errors: [`GitError`] when a step fails (the branch then still points at `head`, unless
/// only the index step failed).
pub(super) fn rewrite_without(
    dir: &Path,
    branch: &str,
    head: gix::ObjectId,
    paths: &[String],
    message: impl Fn(u32) -> String,
    identity: &[(&str, &str)],
    timeout: Duration,
) -> Result<(gix::ObjectId, u32), GitError> {
    let head_hex = head.to_string();
    let tmp = super::wip::git_path(dir, "recode-refused.index", timeout)?;
    let _ = std::fs::remove_file(&tmp);
    let in_tmp = |g: git::Git| g.env("GIT_INDEX_FILE", &tmp);
    let result = (|| {
        in_tmp(git::Git::new(dir, timeout))
            .args(["read-tree", &head_hex])
            .output()?;
        in_tmp(git::Git::new(dir, timeout))
            .args(["update-index", "--force-remove", "--"])
            .args(paths)
            .output()?;
        let tree = trimmed(
            in_tmp(git::Git::new(dir, timeout))
                .arg("write-tree")
                .output()?,
        );
        let parent = git::Git::read(dir, timeout)
            .args(["rev-parse", &format!("{head}^")])
            .output_id()?;
        let parent_hex = parent.to_string();
        let changed = git::read(
            dir,
            timeout,
            &[
                "diff-tree",
                "-r",
                "-z",
                "--name-only",
                "--no-renames",
                &parent_hex,
                &tree,
            ],
        )?;
        let files = changed.split(|b| *b == 0).filter(|p| !p.is_empty()).count() as u32;
        let new = if files == 0 {
            parent
        } else {
            let mut c = git::Git::new(dir, timeout).commit_step().args([
                "commit-tree",
                &tree,
                "-p",
                &parent_hex,
                "-m",
                &message(files),
            ]);
            for (k, v) in identity {
                c = c.env(k, v);
            }
            c.output_id()?
        };
        Ok::<_, GitError>((new, files))
    })();
    let _ = std::fs::remove_file(&tmp);
    let (new, files) = result?;
    git::Git::new(dir, timeout)
        .args([
            "update-ref",
            "-m",
            "recode: WIP commit without files the remote refused",
        ])
        .arg(format!("refs/heads/{branch}"))
        .args([new.to_string(), head_hex])
        .output()?;
    git::Git::new(dir, timeout)
        .args(["update-index", "--force-remove", "--"])
        .args(paths)
        .output()?;
    Ok((new, files))
}

fn trimmed(out: Vec<u8>) -> String {
    String::from_utf8_lossy(&out).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn added() -> Vec<(String, String)> {
        vec![
            ("bin/manager".into(), "a".repeat(40)),
            ("out/deep/lib.so".into(), "b".repeat(40)),
            ("fix.go".into(), "c".repeat(40)),
            ("bin".into(), "d".repeat(40)),
        ]
    }

    #[test]
    fn github_generic_and_gitlab_wordings_name_their_files() {
        let gh = "remote: error: File bin/manager is 347.89 MB; this exceeds GitHub's file size limit of 100.00 MB\nremote: error: GH001: Large files detected.";
        assert!(size_refusal(gh));
        assert_eq!(named(gh, &added()), vec!["bin/manager".to_string()]);
        let generic = "remote: error: File out/deep/lib.so exceeds the file size limit of 5 MB\nremote: error: File bin/manager exceeds the file size limit of 5 MB";
        assert_eq!(
            named(generic, &added()),
            vec!["bin/manager".to_string(), "out/deep/lib.so".to_string()]
        );
        let rules =
            "remote: GitLab: File \"out/deep/lib.so\" is larger than the allowed size of 5 MiB";
        assert!(size_refusal(rules));
        assert_eq!(named(rules, &added()), vec!["out/deep/lib.so".to_string()]);
        let blobs = format!(
            "remote: GitLab: You are attempting to check in one or more files which exceed the 100MiB limit:\nremote: \nremote: - {} (123 MiB)\n ! [remote rejected] x -> x (pre-receive hook declined)",
            "A".repeat(40)
        );
        assert!(size_refusal(&blobs));
        assert_eq!(named(&blobs, &added()), vec!["bin/manager".to_string()]);
    }

    #[test]
    fn a_prefix_of_a_named_path_and_other_refusals_name_nothing() {
        // `bin` is a prefix of `bin/manager`: not named.
        let gh = "remote: error: File bin/manager is 347.89 MB; this exceeds the limit";
        assert!(!named(gh, &added()).contains(&"bin".to_string()));
        let hook = "remote: error: pushing to this branch is not allowed\n ! [remote rejected]";
        assert!(!size_refusal(hook));
        assert!(named(hook, &added()).is_empty());
    }
}
