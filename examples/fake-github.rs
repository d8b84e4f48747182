//! A loopback GitHub API stand-in for shell harnesses: prints its base URL, then serves
//! until killed. `cargo run --example fake-github -- [ADDR]` (default `127.0.0.1:0`).
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
