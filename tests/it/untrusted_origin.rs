//! A hostile forge (SPEC 1.2 "Untrusted input stays out": a token goes only to the API
//! origin it was configured for): a stand-in on 127.0.0.1 answering every request with a
//! redirect, or a `link: rel="next"`, to another loopback origin, 127.0.0.2, where a
//! listener records every request's headers. On GitHub, GitLab and Gitea, whatever the
//! header name (`Authorization`, `PRIVATE-TOKEN`), nothing reaches 127.0.0.2, and the run
//! says why; a redirect within the origin is still followed.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use crate::fake_github::FakeGitHub;
use crate::forge::Fx;

/// What the hostile stand-in answers to every request.
#[derive(Clone, Copy, Debug)]
enum Trick {
    /// This status with `location:` the same path on the other origin.
    Redirect(u16),
    /// 200 `[]` with `link: <other origin>; rel="next"`.
    Link,
    /// 302 to `/moved<path>` on its own origin, where it answers 200 `[]`.
    SameOrigin,
}

/// Every request a listener saw: its request line and header lines, lowercased.
type Seen = Arc<Mutex<Vec<String>>>;

/// Serve on `addr` (`host:0`): each request's head is recorded in the returned log and
/// answered by `answer(path)` (status line and headers after it, and a body).
fn serve(addr: &str, answer: impl Fn(&str) -> (String, String) + Send + 'static) -> (String, Seen) {
    let listener = TcpListener::bind(addr).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line.to_ascii_lowercase());
            }
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
            log.lock().unwrap().push(head);
            let (status_and_headers, body) = answer(&path);
            let _ = write!(
                stream,
                "HTTP/1.1 {status_and_headers}\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

/// The hostile forge playing `trick` towards `elsewhere`; its base URL and its log.
fn hostile(trick: Trick, elsewhere: String) -> (String, Seen) {
    serve("127.0.0.1:0", move |path| match trick {
        Trick::Redirect(code) => (
            format!("{code} Moved\r\nlocation: {elsewhere}{path}"),
            String::new(),
        ),
        Trick::Link => (
            format!("200 OK\r\nlink: <{elsewhere}/page2?page=2>; rel=\"next\""),
            "[]".into(),
        ),
        Trick::SameOrigin if path.starts_with("/moved") => ("200 OK".into(), "[]".into()),
        Trick::SameOrigin => (
            format!("302 Found\r\nlocation: /moved{path}"),
            String::new(),
        ),
    })
}

/// The three forges: `recode.forge`, the remote's URL, the token's variable, its header.
const FORGES: &[(&str, &str, &str, &str)] = &[
    (
        "github",
        "https://github.com/acme/widget.git",
        "GH_TOKEN",
        "authorization",
    ),
    (
        "gitlab",
        "https://gitlab.example/acme/widget.git",
        "GITLAB_TOKEN",
        "private-token",
    ),
    (
        "gitea",
        "https://gitea.example/acme/widget.git",
        "GITEA_TOKEN",
        "authorization",
    ),
];

const TOKEN: &str = "s3cretT0kenValue0123456789";

/// `status --json` then `verify` of a worker on `forge`, whose API is `api`: stderr of each.
fn run_against(forge: &(&str, &str, &'static str, &str), api: &str) -> Vec<String> {
    let (kind, origin, var, _) = *forge;
    let fx = Fx::with_forge(
        FakeGitHub::start(),
        origin,
        (api.to_string(), "RECODE_FORGE_API", var),
    );
    fx.env.git(&fx.repo, &["config", "recode.forge", kind]);
    fx.worker("issue-1-work", 1, 0);
    let mut stderrs = Vec::new();
    for args in [&["status", "--json"][..], &["verify", "issue-1-work"]] {
        let out = fx
            .env
            .cmd(&fx.repo)
            .env(var, TOKEN)
            .env("RECODE_FORGE_API", api)
            .env("RECODE_FORGE_MAX_WAIT", "0")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{kind} {args:?}");
        stderrs.push(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    stderrs
}

#[test]
fn redirects_to_another_origin_are_refused_on_every_forge() {
    for forge in FORGES {
        for code in [301, 302, 303, 307, 308] {
            let (other, seen_there) = serve("127.0.0.2:0", |_| ("200 OK".into(), "[]".into()));
            let (api, seen_here) = hostile(Trick::Redirect(code), other.clone());
            let stderrs = run_against(forge, &api);
            let shown = format!("{} {code}", forge.0);
            assert_eq!(
                *seen_there.lock().unwrap(),
                Vec::<String>::new(),
                "{shown}: a request reached the other origin"
            );
            let asked = seen_here.lock().unwrap().clone();
            assert!(
                !asked.is_empty() && asked.iter().all(|h| h.contains(forge.3)),
                "{shown}: the forge itself was asked with the token: {asked:?}"
            );
            let refused =
                format!("a redirect to {other} was refused: the token goes only to {api}");
            assert!(
                stderrs[0].contains(&refused),
                "{shown}: status does not say why:\n{}\nwanted: {refused}",
                stderrs[0]
            );
        }
    }
}

#[test]
fn a_next_page_on_another_origin_ends_the_listing_with_a_warning() {
    for forge in FORGES {
        let (other, seen_there) = serve("127.0.0.2:0", |_| ("200 OK".into(), "[]".into()));
        let (api, _) = hostile(Trick::Link, other.clone());
        let stderrs = run_against(forge, &api);
        assert_eq!(
            *seen_there.lock().unwrap(),
            Vec::<String>::new(),
            "{}: a request reached the other origin",
            forge.0
        );
        let warned = format!(
            "ends at page 1: its next page is on {other}, and the token goes only to {api}"
        );
        assert!(
            stderrs[0].contains(&warned) && !stderrs[0].contains("the forge failed"),
            "{}: status:\n{}\nwanted: {warned}",
            forge.0,
            stderrs[0]
        );
    }
}

#[test]
fn a_redirect_within_the_origin_is_followed_with_the_token() {
    for forge in FORGES {
        let (api, seen) = hostile(Trick::SameOrigin, String::new());
        let stderrs = run_against(forge, &api);
        assert!(
            !stderrs[0].contains("failed") && !stderrs[0].contains("refused"),
            "{}: {}",
            forge.0,
            stderrs[0]
        );
        let moved: Vec<String> = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|h| {
                h.split_whitespace()
                    .nth(1)
                    .is_some_and(|p| p.starts_with("/moved"))
            })
            .cloned()
            .collect();
        assert!(
            !moved.is_empty() && moved.iter().all(|h| h.contains(&format!("{}:", forge.3))),
            "{}: the moved listing was not asked with the token: {moved:?}",
            forge.0
        );
    }
}
