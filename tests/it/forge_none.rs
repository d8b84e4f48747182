//! `recode.forge` (SPEC Config, 1.2 "Forges"): `none` is first-class (nothing asked,
//! nothing phantom or published on a guess, publish pushes and says why no pull request),
//! `auto` picks the forge from the remote's host, and an unknown value is a clear error.

use serde_json::Value;

use crate::fake_github::FakeGitHub;
use crate::forge::{Fx, find, publishable, sap};
use crate::forge_other::Other;
use crate::{fake_gitea, fake_gitlab};

#[test]
fn forge_none_asks_nothing_and_guesses_nothing() {
    // A github.com remote and a token: `none` still asks nothing.
    let fx = Fx::new();
    fx.env.git(&fx.repo, &["config", "recode.forge", "none"]);
    let tip = publishable(&fx, "issue-4-ready");
    fx.worker("issue-5-claims", 1, 0);
    fx.gh.add_pr("acme", "widget", "issue-5-claims", "open");
    let (run, workers) = fx.status();
    assert_eq!(run.stderr, "");
    assert_eq!(
        sap(find(&workers, "issue-5-claims")),
        ("half-done", "resume", Value::Null, false)
    );
    let r = fx.run(&["verify", "issue-5-claims"]);
    assert_eq!((r.stdout.as_str(), r.code), ("unknown\n", Some(0)));
    assert_eq!(fx.kinds("issue-5-claims"), vec!["spawn", "exit"]);
    let r = fx.run(&["recover", "issue-4-ready", "--json"]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let res = &doc["results"][0];
    assert_eq!(res["result"], "held", "{doc}");
    assert!(
        res["reason"]
            .as_str()
            .unwrap()
            .contains("recode.forge is none"),
        "{res}"
    );
    assert_eq!(
        fx.rev(&fx.bare, "refs/heads/issue-4-ready").as_deref(),
        Some(tip.as_str())
    );
    assert_eq!(fx.gh.requests(), Vec::<String>::new());
    assert_eq!(fx.gh.prs().len(), 1);
}

#[test]
fn an_unknown_forge_is_a_config_error() {
    let fx = Fx::new();
    fx.env
        .git(&fx.repo, &["config", "recode.forge", "bitbucket"]);
    let r = fx.run(&["status"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "config recode.forge = 'bitbucket' is invalid: expected one of auto, github, \
             gitlab, gitea, forgejo, none"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "");
}

#[test]
fn auto_finds_gitlab_com_and_codeberg_by_the_host() {
    for (origin, var, srv, url) in [
        (
            "https://gitlab.com/acme/widget.git",
            "GITLAB_TOKEN",
            fake_gitlab::start(),
            "https://gitlab.example/acme/widget/-/merge_requests/1",
        ),
        (
            "git@codeberg.org:acme/widget.git",
            "GITEA_TOKEN",
            fake_gitea::start(),
            "https://gitea.example/acme/widget/pulls/1",
        ),
    ] {
        let fx = Fx::with_forge(
            FakeGitHub::start(),
            origin,
            (srv.url.clone(), "RECODE_FORGE_API", var),
        );
        let o = Other {
            fx,
            srv,
            kind: "auto",
        };
        let n = o.published("issue-1-open");
        let (run, workers) = o.status();
        assert_eq!(run.stderr, "", "{origin}");
        let w = find(&workers, "issue-1-open");
        assert_eq!(
            (&w["pr"]["number"], &w["pr"]["url"]),
            (&n.into(), &url.into())
        );
        assert_eq!(o.gh.requests(), Vec::<String>::new());
        // Without its token: one warning naming the variable, and pull requests unknown.
        let (run, workers) = o.status_with(false, &[]);
        assert_eq!(run.warnings().len(), 1, "{}", run.stderr);
        assert!(run.stderr.contains(var), "{}", run.stderr);
        assert_eq!(find(&workers, "issue-1-open")["pr"], Value::Null);
    }
}
