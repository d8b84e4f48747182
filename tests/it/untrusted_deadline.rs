//! Forge deadlines (SPEC safety rule 0: network steps end within `recode.networkTimeout`):
//! a forge step, its retries and the waits between them included, ends within the
//! timeout, not the timeout per try; a page over 10 MB is named. Loopback stand-ins that
//! answer slowly, never, or too much.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::fake_github::FakeGitHub;
use crate::forge::Fx;

/// How the stand-in answers each request.
#[derive(Clone, Copy)]
enum Slow {
    /// A 503 after this long (retried by the client).
    Late503(Duration),
    /// Never: the connection is held open.
    Never,
    /// At once, 200 with a JSON array over 10 MB.
    Huge,
    /// A 302 to another path of the same origin after this long, every time.
    Redirect(Duration),
}

/// The stand-in's base URL.
fn stand_in(slow: Slow) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let base = url.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let base = base.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let body = match slow {
                    Slow::Late503(d) => {
                        std::thread::sleep(d);
                        let _ = write!(
                            stream,
                            "HTTP/1.1 503 Busy\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}"
                        );
                        return;
                    }
                    Slow::Never => {
                        std::thread::sleep(Duration::from_secs(60));
                        return;
                    }
                    Slow::Huge => format!("[{}]", " ".repeat(10 * 1024 * 1024 + 1)),
                    Slow::Redirect(d) => {
                        std::thread::sleep(d);
                        let _ = write!(
                            stream,
                            "HTTP/1.1 302 Found\r\nlocation: {base}/hop/{n}\r\ncontent-length: 0\r\n\
                             connection: close\r\n\r\n"
                        );
                        return;
                    }
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    url
}

/// A GitHub repository with one worker, `recode.networkTimeout` at `timeout`, the API at
/// `api`: how long `args` took, and its stderr.
fn timed(api: &str, timeout: &str, args: &[&str]) -> (Duration, String) {
    let fx = Fx::with_forge(
        FakeGitHub::start(),
        "https://github.com/acme/widget.git",
        (api.to_string(), "RECODE_GITHUB_API", "GH_TOKEN"),
    );
    fx.env
        .git(&fx.repo, &["config", "recode.networkTimeout", timeout]);
    fx.worker("issue-1-work", 1, 0);
    let start = Instant::now();
    let out = fx
        .env
        .cmd(&fx.repo)
        .env("GH_TOKEN", "ghp_0123456789abcdefghij0123456789abcdef")
        .env("RECODE_GITHUB_API", api)
        .env("RECODE_FORGE_MAX_WAIT", "5")
        .args(args)
        .output()
        .unwrap();
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    (took, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_forge_step_with_its_retries_ends_within_the_network_timeout() {
    // Each try answers a 503 after 1.2 s: four tries with their pauses took over 5 s.
    let api = stand_in(Slow::Late503(Duration::from_millis(1200)));
    for args in [&["status", "--json"][..], &["verify", "issue-1-work"]] {
        let (took, stderr) = timed(&api, "2s", args);
        assert!(
            took < Duration::from_millis(3500),
            "{args:?} took {took:?}:\n{stderr}"
        );
    }
}

#[test]
fn a_forge_that_never_answers_is_given_up_after_the_timeout_once() {
    let api = stand_in(Slow::Never);
    let (took, stderr) = timed(&api, "2s", &["status", "--json"]);
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_millis(3500),
        "took {took:?}:\n{stderr}"
    );
    assert!(
        stderr.contains("no answer within 2 s (recode.networkTimeout), retries included"),
        "{stderr}"
    );
}

#[test]
fn a_page_over_ten_megabytes_is_named() {
    let api = stand_in(Slow::Huge);
    let (_, stderr) = timed(&api, "30s", &["status", "--json"]);
    assert!(
        stderr.contains("is a page over 10 MB: not read") && !stderr.contains("unexpected"),
        "{stderr}"
    );
}

#[test]
fn slow_redirects_within_the_origin_share_the_steps_network_timeout() {
    // Each hop answers a 302 to the same origin after 1.5 s: six hops, each with the full
    // timeout, took 9 s.
    let api = stand_in(Slow::Redirect(Duration::from_millis(1500)));
    for args in [&["status", "--json"][..], &["verify", "issue-1-work"]] {
        let (took, stderr) = timed(&api, "2s", args);
        assert!(
            took < Duration::from_millis(3500),
            "{args:?} took {took:?}:\n{stderr}"
        );
        assert!(
            stderr.contains("no answer within 2 s (recode.networkTimeout), retries included"),
            "{args:?}: {stderr}"
        );
    }
}
