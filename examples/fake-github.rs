//! A loopback GitHub API stand-in for shell harnesses: prints its base URL, then serves
//! until killed. `cargo run --example fake-github -- [ADDR]` (default `127.0.0.1:0`).
//!
//! A harness sets a check or a review on a branch's newest pull request and reads the
//! request counts over HTTP (see `fixtures/fake_github.rs`), e.g.
//! `curl -d '{"owner":"acme","repo":"widget","branch":"issue-1-x","name":"test","conclusion":"failure"}' $URL/_admin/check`,
//! `POST $URL/_admin/status`, `POST $URL/_admin/review`, `GET $URL/_admin/stats`.
#[path = "../fixtures/fake_github.rs"]
mod fake_github;

fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let server = fake_github::FakeGitHub::start_on(&addr);
    println!("{}", server.url);
    loop {
        std::thread::park();
    }
}
