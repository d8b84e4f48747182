//! How the agent is started: session or fresh, and the POSIX shell command for
//! `recode.agent` (a known agent's profile, or a template filled in one pass).

use std::path::Path;

use serde::Serialize;

use crate::model::Body;
use crate::model::{Snapshot, Worker};

use super::ResumeError;

/// How the agent is started.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    /// Resume the agent's own session.
    Session,
    /// A fresh session with the prompt.
    Fresh,
}

/// The command a loop runs.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub(crate) struct Launch {
    /// Session or fresh.
    pub mode: Mode,
    /// Why this mode.
    pub why: String,
    /// The directory to run it in.
    pub cwd: String,
    /// A POSIX shell command line (values single-quoted; the prompt read from its file;
    /// the forge tokens unset first: `cd <cwd> && unset GH_TOKEN … && <agent>`).
    pub command: String,
    /// The session resumed.
    pub session_id: Option<String>,
}

/// `unset GH_TOKEN GITHUB_TOKEN …`: the printed command's step that keeps the forge
/// tokens ([`crate::redact::TOKEN_ENV`]) out of the agent's environment (SPEC 1.2: the
/// commands `resume` prints run without them). A POSIX shell builtin, so the command runs
/// as shown under `sh -c` and covers every word of a `recode.agent` template.
pub(crate) fn unset_tokens() -> String {
    format!("unset {}", crate::redact::TOKEN_ENV.join(" "))
}

/// Quote one argument for a POSIX shell: single quotes, `'` and `!` escaped
/// ([`gix::quote::single`], as git quotes aliases).
pub(crate) fn sh_quote(s: &str) -> String {
    use gix::bstr::ByteSlice;
    gix::quote::single(s.as_bytes().as_bstr()).to_string()
}

/// Fill a `recode.agent` template in one pass, left to right: each placeholder is replaced
/// by its value, and a value is never scanned again, so a session id, directory or prompt
/// path that contains `{cwd}` or `{prompt_file}` text stays as it is.
pub(crate) fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while !rest.is_empty() {
        if let Some((key, value)) = values.iter().find(|(k, _)| rest.starts_with(k)) {
            out.push_str(value);
            rest = &rest[key.len()..];
        } else {
            let c = rest.chars().next().expect("rest is not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Whether `dir` lies inside `top` (both resolved; a path that does not exist is inside
/// nothing).
fn inside(dir: &str, top: &str) -> bool {
    match (Path::new(dir).canonicalize(), Path::new(top).canonicalize()) {
        (Ok(d), Ok(t)) => d.starts_with(t),
        _ => false,
    }
}

/// Whether the last exit asked for a fresh session (`fresh: true`: the session is gone or
/// its context exhausted).
fn last_exit_was_fresh(snap: &Snapshot, r: &crate::model::replay::Replay) -> bool {
    r.last_exit.is_some_and(|i| {
        matches!(
            snap.events[i].body,
            Body::Exit {
                fresh: Some(true),
                ..
            }
        )
    })
}

/// A known agent's command: its resume form when `in_session` (else its fresh form), with
/// `{args}` the attempt's recorded flags (else [`crate::agent::Profile::default_args`]; never both, so a
/// resume has no wider permissions than the attempt it continues) and the recorded
/// configuration directory in the profile's variable (SPEC 1.3 "Real agents").
fn profile_command(
    p: &crate::agent::Profile,
    in_session: bool,
    args: Option<&[String]>,
    config_dir: Option<&str>,
    values: &[(&str, String)],
) -> String {
    let template = match (in_session, p.resume) {
        (true, Some(r)) => r,
        _ => p.fresh,
    };
    let mut args: Vec<String> = match args {
        Some(a) => a.iter().map(|a| sh_quote(a)).collect(),
        None => p.default_args.iter().map(|a| a.to_string()).collect(),
    };
    // After `--` no word is an option: not the prompt (which an option taking several
    // values would swallow), not a session id (SPEC 1.2 "Untrusted input stays out").
    if p.args_end_with_dashes {
        args.push("--".into());
    }
    let template = if args.is_empty() {
        template.replace(" {args}", "")
    } else {
        template.to_string()
    };
    let mut values = values.to_vec();
    values.push(("{args}", args.join(" ")));
    let mut env: String = p.env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    if let (Some(var), Some(dir)) = (p.config_env, config_dir) {
        env.push_str(&format!("{var}={} ", sh_quote(dir)));
    }
    format!("{env}{}", fill(&template, &values))
}

/// Whether a template's placeholder sits inside the template's own quotes (SPEC
/// `recode.agent`: refused, since a value quoted again could leave its quotes). Returns
/// the first such placeholder.
pub(crate) fn quoted_placeholder(template: &str) -> Option<&'static str> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    for (i, c) in template.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '{' if single || double => {
                if let Some(p) = PLACEHOLDERS.iter().find(|p| template[i..].starts_with(**p)) {
                    return Some(p);
                }
            }
            _ => {}
        }
    }
    None
}

/// The placeholders of a `recode.agent` template.
pub(crate) const PLACEHOLDERS: [&str; 3] = ["{session_id}", "{cwd}", "{prompt_file}"];

/// What the newest `spawn` on the branch recorded for the agent resuming it.
#[derive(Default)]
struct Recorded {
    /// The directory it ran in.
    cwd: Option<String>,
    /// Its agent flags: only when the same agent resumes (another agent gets its defaults).
    args: Option<Vec<String>>,
    /// Its configuration directory: likewise only for the same agent.
    config_dir: Option<String>,
}

/// The newest `spawn` of `snap`'s branch (or of no branch), as `agent` may reuse it: the
/// spawned agent's flags and configuration directory are dropped when another agent
/// resumes. All `None` without a spawn.
fn recorded_spawn(snap: &Snapshot, agent: &str) -> Recorded {
    let own = |e: &&crate::model::Event| e.branch.as_deref().is_none_or(|b| b == snap.branch);
    snap.events
        .iter()
        .rev()
        .filter(own)
        .find_map(|e| match &e.body {
            Body::Spawn {
                cwd,
                agent: spawned_by,
                agent_args,
                config_dir,
                ..
            } => {
                // Flags are the spawned agent's: another agent resuming gets its defaults.
                let same = spawned_by.as_deref().is_none_or(|a| a == agent);
                Some(Recorded {
                    cwd: Some(cwd.clone()),
                    args: agent_args.clone().filter(|_| same),
                    config_dir: config_dir.clone().filter(|_| same),
                })
            }
            _ => None,
        })
        .unwrap_or_default()
}

/// The decision [`decide`] makes: session or fresh, why, and the session and recorded
/// directory kept (both `None` for a fresh run).
struct Decision {
    mode: Mode,
    why: String,
    session: Option<String>,
    cwd: Option<String>,
}

/// Session or fresh, and why: fresh when the agent has no resume by id (`no_resume`), no
/// session id is recorded, the last exit asked for a fresh session, or (when the agent's
/// sessions belong to their directory, `needs_cwd`) the recorded directory is gone or
/// outside `default_cwd`; else the recorded session, in the recorded directory when the
/// agent needs it.
fn decide(
    agent: &str,
    snap: &Snapshot,
    w: &Worker,
    recorded_cwd: Option<&String>,
    default_cwd: &str,
    (needs_cwd, no_resume): (bool, bool),
) -> Decision {
    let r = snap.replayed();
    let last_fresh = last_exit_was_fresh(snap, r);
    let fresh = |why: String| Decision {
        mode: Mode::Fresh,
        why,
        session: None,
        cwd: None,
    };
    match (&r.session_id, recorded_cwd) {
        _ if no_resume => fresh(format!(
            "{agent} has no sessions to resume by id: a fresh run with the prompt"
        )),
        (None, _) => fresh("no agent session id is recorded".to_string()),
        (Some(_), _) if last_fresh => fresh(
            "the last failure exhausted the context window: resuming the session would repeat it"
                .to_string(),
        ),
        (Some(_), Some(c)) if needs_cwd && !Path::new(c).is_dir() => fresh(format!(
            "the session's directory {c} no longer exists (agents find sessions by directory)"
        )),
        (Some(_), Some(c)) if needs_cwd && !inside(c, default_cwd) => fresh(format!(
            "the session's directory {c} is not in {}'s worktree {default_cwd} (the agent must run on its branch)",
            w.branch
        )),
        (Some(id), c) => Decision {
            mode: Mode::Session,
            why: format!("resuming session {id}"),
            session: Some(id.clone()),
            cwd: c.cloned().filter(|_| needs_cwd),
        },
    }
}

/// Decide session or fresh and build the command for `recode.agent`: a known agent's
/// [`Profile`](crate::agent::Profile) (its resume command by session id, else its fresh
/// command), or a template whose placeholders become single-quoted words.
///
/// Errors: [`ResumeError::Template`] when the template puts a placeholder inside its own
/// quotes (exit 2).
pub(crate) fn launch(
    agent: &str,
    snap: &Snapshot,
    w: &Worker,
    prompt_file: &str,
    default_cwd: &str,
) -> Result<Launch, ResumeError> {
    // A known agent's profile, else the user's template (whose sessions are taken to
    // belong to their directory).
    let profile = crate::agent::profile(agent);
    let needs_cwd = profile.is_none_or(|p| p.resume_needs_cwd);
    if profile.is_none()
        && let Some(p) = quoted_placeholder(agent)
    {
        return Err(ResumeError::Template {
            value: agent.to_string(),
            placeholder: p,
        });
    }
    let recorded = recorded_spawn(snap, agent);
    let no_resume = profile.is_some_and(|p| p.resume.is_none());
    let d = decide(
        agent,
        snap,
        w,
        recorded.cwd.as_ref(),
        default_cwd,
        (needs_cwd, no_resume),
    );
    // `default_cwd` is where the worker's branch is checked out (`place`): the recorded
    // cwd only when it lies inside it (SPEC `resume`: always on the worker's branch).
    let cwd = d.cwd.unwrap_or_else(|| default_cwd.to_string());
    let values = [
        ("{session_id}", sh_quote(d.session.as_deref().unwrap_or(""))),
        ("{cwd}", sh_quote(&cwd)),
        ("{prompt_file}", sh_quote(prompt_file)),
        ("{prompt}", format!("\"$(cat {})\"", sh_quote(prompt_file))),
    ];
    let body = match profile {
        Some(p) => profile_command(
            p,
            d.session.is_some(),
            recorded.args.as_deref(),
            recorded.config_dir.as_deref(),
            &values,
        ),
        None => fill(agent, &values[..3]),
    };
    Ok(Launch {
        mode: d.mode,
        why: d.why,
        command: format!("cd {} && {} && {body}", sh_quote(&cwd), unset_tokens()),
        cwd,
        session_id: d.session,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_inside_the_templates_own_quotes_is_found() {
        for (t, want) in [
            ("a --s {session_id} {prompt_file}", None),
            ("a --s '{session_id}'", Some("{session_id}")),
            ("a --in \"x {cwd}\"", Some("{cwd}")),
            ("a \"$(cat {prompt_file})\"", Some("{prompt_file}")),
            ("a \\'{session_id}", None),
            ("a 'it''s' {cwd} '{other}'", None),
            ("a \"it's\" {cwd}", None),
        ] {
            assert_eq!(quoted_placeholder(t), want, "{t}");
        }
    }
}
