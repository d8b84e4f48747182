//! Self-hosted forges as people set them up (SPEC 1.3 "The loop as people run it",
//! "Self-hosted forges"): `RECODE_FORGE_API` given as the instance root, a remote that
//! names no project, `recode.forge auto` on a host that is not recognisably a forge,
//! every forge's variables in `--help` and the man page, and reasons in the forge's own
//! words (merge request on GitLab). Real git, the real binary, the loopback stand-ins
//! (`fixtures/fake_gitlab.rs`, `fixtures/fake_gitea.rs`), which answer only under the
//! API path (`/api/v4`, `/api/v1`) as a real instance does.

use serde_json::Value;

use crate::common::TestEnv;
use crate::forge::{find, publishable};
use crate::forge_other::Other;
use crate::{fake_gitea, fake_gitlab};

/// The `doctor` line of `check` in `out`.
fn line<'a>(out: &'a str, check: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(check))
        .unwrap_or_else(|| panic!("no {check} line in:\n{out}"))
}

/// The doctor probe's request at `api_path` (`/api/v4`).
fn probe(api_path: &str) -> String {
    format!(
        "GET {api_path}/projects/acme%2Fwidget/merge_requests?source_branch=recode-doctor-probe&state=all&per_page=100 auth"
    )
}

/// Doctor's forge line when the stand-in at `url` answered through `url` + `api_path`.
fn resolved(name: &str, kind: &str, url: &str, api_path: &str) -> String {
    format!(
        "ok    forge       remote 'origin' is on {name} (recode.forge {kind}; API {url}{api_path} \
         from RECODE_FORGE_API, project acme/widget): token answered"
    )
}

#[test]
fn gitlab_api_given_as_the_instance_root_gets_api_v4_and_doctor_names_what_it_resolved() {
    let o = Other::new("gitlab", fake_gitlab::start());
    let url = o.srv.url.clone();
    // `Other` gives the stand-in's root (no /api/v4) as RECODE_FORGE_API.
    o.srv.clear_requests();
    let r = o.run(&["doctor"]);
    assert_eq!(
        line(&r.stdout, "forge"),
        resolved("GitLab", "gitlab", &url, "/api/v4")
    );
    assert_eq!(o.srv.requests(), vec![probe("/api/v4")]);
    // The API URL itself, with a trailing slash, is taken as it is: no second /api/v4.
    o.srv.clear_requests();
    let api = format!("{url}/api/v4/");
    let r = o.run_env(true, &[("RECODE_FORGE_API", &api)], &["doctor"]);
    assert_eq!(
        line(&r.stdout, "forge"),
        resolved("GitLab", "gitlab", &url, "/api/v4")
    );
    assert_eq!(o.srv.requests(), vec![probe("/api/v4")]);
    // status sees the open merge request through the instance root.
    let n = o.published("issue-1-open");
    let (run, workers) = o.status();
    assert_eq!(run.stderr, "");
    assert_eq!(find(&workers, "issue-1-open")["pr"]["number"], n);
}

#[test]
fn gitea_api_given_as_the_instance_root_gets_api_v1() {
    let o = Other::new("gitea", fake_gitea::start());
    let url = o.srv.url.clone();
    o.srv.clear_requests();
    let r = o.run(&["doctor"]);
    assert_eq!(
        line(&r.stdout, "forge"),
        resolved("Gitea", "gitea", &url, "/api/v1")
    );
    assert_eq!(
        o.srv.requests(),
        vec!["GET /api/v1/repos/acme/widget/pulls?state=all&limit=50 auth".to_string()]
    );
}

#[test]
fn a_wrong_api_base_is_not_blamed_on_the_token() {
    let o = Other::new("gitlab", fake_gitlab::start());
    let url = o.srv.url.clone();
    // An instance under a relative root that is not there: the web UI's 404 page.
    let api = format!("{url}/gitlab");
    let r = o.run_env(true, &[("RECODE_FORGE_API", &api)], &["doctor"]);
    assert_eq!(
        line(&r.stdout, "forge"),
        format!(
            "fail  forge       remote 'origin' is on GitLab (recode.forge gitlab; API {url}/gitlab/api/v4 \
             from RECODE_FORGE_API, project acme/widget): it does not answer: GitLab answered 404 to the merge request lookup: (no message: \
             the answer was not the forge's JSON) \
             (fix: check the API base {url}/gitlab/api/v4 (RECODE_FORGE_API: the instance root, \
             or its /api/vN URL) and the project acme/widget (a token without access to it also gets 404))"
        )
    );
    // A token the instance refuses is the token's fault, and said so.
    o.srv
        .fail_next(401, &[], r#"{"message":"401 Unauthorized"}"#);
    let r = o.run(&["doctor"]);
    assert_eq!(
        line(&r.stdout, "forge"),
        format!(
            "fail  forge       remote 'origin' is on GitLab (recode.forge gitlab; API {url}/api/v4 \
             from RECODE_FORGE_API, project acme/widget): it does not answer: GitLab answered 401 \
             to the merge request lookup: 401 Unauthorized (fix: check the token (GITLAB_TOKEN) and \
             its access to acme/widget)"
        )
    );
}

#[test]
fn a_local_path_remote_on_gitlab_names_no_project_and_says_what_to_set() {
    let env = TestEnv::new();
    let (repo, _) = env.repo_with_origin();
    env.git(&repo, &["config", "recode.forge", "gitlab"]);
    let run = |args: &[&str]| {
        let out = env
            .cmd(&repo)
            .env("GITLAB_TOKEN", "t0ken")
            .args(args)
            .output()
            .unwrap();
        let root = env.root().display().to_string();
        (
            String::from_utf8_lossy(&out.stdout).replace(&root, "<root>"),
            String::from_utf8_lossy(&out.stderr).replace(&root, "<root>"),
        )
    };
    let why = "the remote URL '<root>/origin.git' names no GitLab project (a URL like \
               https://HOST/GROUP/PROJECT.git is needed): point recode.remote at a remote whose \
               URL names it (`git remote set-url <remote> <url>`), or `git config recode.forge none`";
    let (out, _) = run(&["doctor"]);
    assert_eq!(
        line(&out, "forge"),
        format!(
            "fail  forge       remote 'origin': {why} (fix: git remote set-url origin <the GitLab \
             URL of the repository>, or git config recode.forge none)"
        )
    );
    let (out, err) = run(&["status", "--json"]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["schema"], 1);
    assert_eq!(err, format!("warning: no forge: {why}\n"));
    assert!(!err.contains("gitlab.com"), "{err}");
}

#[test]
fn auto_on_a_self_hosted_host_warns_that_the_forge_could_not_be_detected() {
    let o = Other::new("gitlab", fake_gitlab::start());
    let n = o.published("issue-1-open");
    o.env.git(&o.repo, &["config", "recode.forge", "auto"]);
    // gitlab.example is no host `auto` knows: the open merge request is not seen.
    let (run, workers) = o.status();
    assert_eq!(find(&workers, "issue-1-open")["pr"], Value::Null);
    assert_eq!(run.warnings().len(), 1, "{}", run.stderr);
    let r = o.run(&["doctor"]);
    assert_eq!(
        line(&r.stdout, "forge"),
        "warn  forge       remote 'origin' (https://gitlab.example/acme/widget.git) is on \
         gitlab.example, which recode.forge auto does not recognise as GitLab, GitHub or Gitea: \
         the forge could not be detected, so its merge or pull requests are not seen (status \
         shows none) (fix: git config recode.forge gitlab (or github, gitea: the forge at that \
         host; recode.forge none if it is plain git))"
    );
    // The fix it names makes the merge request seen, and doctor ok.
    o.env.git(&o.repo, &["config", "recode.forge", "gitlab"]);
    let (_, workers) = o.status();
    assert_eq!(find(&workers, "issue-1-open")["pr"]["number"], n);
    let r = o.run(&["doctor"]);
    assert!(
        line(&r.stdout, "forge").starts_with("ok    forge       remote 'origin' is on GitLab"),
        "{}",
        r.stdout
    );
    // A plain local remote under auto is no forge and no warning.
    let env = TestEnv::new();
    let (repo, _) = env.repo_with_origin();
    let out = env.output(&repo, &["doctor"]);
    let out =
        String::from_utf8_lossy(&out.stdout).replace(&env.root().display().to_string(), "<root>");
    assert_eq!(
        line(&out, "forge"),
        "ok    forge       remote 'origin' (<root>/origin.git) is on no known forge (recode.forge \
         auto): pull requests are opened by hand"
    );
}

#[test]
fn help_and_the_man_page_list_every_forges_variables() {
    let env = TestEnv::new();
    let help = env.ok(&env.root(), &["--help"]);
    for want in [
        "  GitHub        GH_TOKEN or GITHUB_TOKEN; GH_HOST for GitHub Enterprise",
        "  GitLab        GITLAB_TOKEN (sent as PRIVATE-TOKEN)",
        "  Gitea/Forgejo GITEA_TOKEN or FORGEJO_TOKEN",
        "  RECODE_FORGE_API (or RECODE_GITHUB_API) is the API base of whichever forge: a",
    ] {
        assert!(help.lines().any(|l| l == want), "{want:?} in:\n{help}");
    }
    let man = env.ok(&env.root(), &["man"]);
    let env_section = &man[man.find(".SH ENVIRONMENT").unwrap()..];
    for want in [
        r"\fBGH_TOKEN\fR, \fBGITHUB_TOKEN\fR, \fBGH_HOST\fR",
        r"\fBGITLAB_TOKEN\fR",
        r"\fBGITEA_TOKEN\fR, \fBFORGEJO_TOKEN\fR",
        r"\fBRECODE_FORGE_API\fR, \fBRECODE_GITHUB_API\fR",
        r"\fBRECODE_FORGE_MAX_WAIT\fR",
    ] {
        assert!(
            env_section.lines().any(|l| l == want),
            "{want:?} in:\n{env_section}"
        );
    }
}

#[test]
fn reasons_say_merge_request_on_gitlab_and_pull_request_on_gitea() {
    for (kind, srv, open, closed) in [
        (
            "gitlab",
            fake_gitlab::start(),
            "merge request !1 is open",
            "merge request !2 was closed without merging: a human closed it",
        ),
        (
            "gitea",
            fake_gitea::start(),
            "pull request #1 is open",
            "pull request #2 was closed without merging: a human closed it",
        ),
    ] {
        let o = Other::new(kind, srv);
        assert_eq!(o.published("issue-1-open"), 1);
        let closed_n = o.published("issue-2-closed");
        o.srv.set_state(closed_n, "closed");
        let (_, workers) = o.status();
        let w = find(&workers, "issue-1-open");
        assert_eq!(w["reason"], open, "{kind}");
        // The JSON contract keeps its field names on every forge.
        assert_eq!(w["pr"]["number"], 1, "{kind}");
        assert_eq!(find(&workers, "issue-2-closed")["reason"], closed, "{kind}");
        // recover's result, and the human table, say it the same way.
        publishable(&o, "issue-4-ready");
        let r = o.run(&["recover", "issue-4-ready", "--json"]);
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(
            doc["results"][0]["reason"],
            format!("pushed and opened {} {}", o.req(3), o.url(3)),
            "{kind}"
        );
        let table = o.ok(&["status"]);
        assert!(table.contains(open), "{kind}: {table}");
    }
}
