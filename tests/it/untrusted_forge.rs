//! A hostile forge (SPEC 1.2 "Untrusted input stays out"): an echoing proxy on loopback
//! that answers every request with a 500 whose body repeats the request's
//! `Authorization` header and the token alone, as an HTML page or as a forge JSON
//! `message`. No output of any command, at any verbosity, may hold the token.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use crate::forge::Fx;

/// How the proxy answers.
#[derive(Clone, Copy)]
enum Page {
    /// `text/html`: a proxy's error page.
    Html,
    /// A forge's JSON error whose `message` quotes the header.
    Json,
}

/// Start the echoing proxy; its base URL.
fn echoing_forge(page: Page) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut auth = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if line.to_ascii_lowercase().starts_with("authorization:") {
                    auth = line["authorization:".len()..].trim().to_string();
                }
            }
            let token = auth.split_whitespace().last().unwrap_or("").to_string();
            let (kind, body) = match page {
                Page::Html => (
                    "text/html",
                    format!(
                        "<html><body><h1>500</h1><pre>Authorization: {auth}</pre>\
                         <p>{token}</p></body></html>"
                    ),
                ),
                Page::Json => (
                    "application/json",
                    serde_json::json!({
                        "message": format!("upstream refused {auth} ({token})"),
                        "errors": [{"message": format!("token {token}")}],
                    })
                    .to_string(),
                ),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 500 Internal Server Error\r\ncontent-type: {kind}\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

/// Every command that asks the forge, at every verbosity: none of its output holds
/// `token`, and at least one warning shows the forge failed.
fn no_output_holds(fx: &Fx, api: &str, var: &str, token: &str) {
    let commands: &[&[&str]] = &[
        &["status", "--json"],
        &["status"],
        &["classify", "issue-1-work"],
        &["recover", "--all", "--json"],
        &["verify", "issue-1-work"],
        &["resume", "issue-1-work", "--dry-run"],
    ];
    let levels: &[(&[&str], Option<&str>)] = &[
        (&[], None),
        (&["-v"], None),
        (&["-vv"], None),
        (&[], Some("trace")),
    ];
    for args in commands {
        for (flags, rust_log) in levels {
            let mut cmd = fx.env.cmd(&fx.repo);
            cmd.env_remove("GH_TOKEN")
                .env(var, token)
                .env("RECODE_GITHUB_API", api)
                .env("RECODE_FORGE_MAX_WAIT", "0")
                .args(*flags)
                .args(*args);
            if let Some(l) = rust_log {
                cmd.env("RUST_LOG", l);
            }
            let out = cmd.output().unwrap();
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            let shown = format!("{args:?} {flags:?} RUST_LOG={rust_log:?}");
            assert!(
                !stdout.contains(token) && !stderr.contains(token),
                "the token leaked from {shown}:\n{stdout}\n--- stderr ---\n{stderr}"
            );
            assert!(
                stderr.contains("500"),
                "{shown}: the forge's failure is not shown:\n{stderr}"
            );
        }
    }
}

#[test]
fn an_echoing_html_error_page_never_prints_the_token() {
    let fx = Fx::new();
    fx.worker("issue-1-work", 1, 0);
    let api = echoing_forge(Page::Html);
    no_output_holds(
        &fx,
        &api,
        "GH_TOKEN",
        "ghp_Zq9XwV8uT7sR6pO5nM4lK3jI2hG1fE0dC9bA",
    );
}

#[test]
fn an_echoing_json_message_never_prints_a_token_of_any_shape() {
    let fx = Fx::new();
    fx.worker("issue-1-work", 1, 0);
    let api = echoing_forge(Page::Json);
    // A token with no known shape: only its value says it is one.
    no_output_holds(&fx, &api, "GITHUB_TOKEN", "plainS3cretValue77");
}
