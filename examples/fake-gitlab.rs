//! A loopback GitLab API stand-in for shell harnesses: prints its base URL, then serves
//! until killed. `cargo run --example fake-gitlab -- [ADDR]` (default `127.0.0.1:0`).
//! The admin endpoints (`/_admin/ci`, `/_admin/reviewer`, `/_admin/push`,
//! `/_admin/state`, `/_admin/stats`) are those of `fixtures/fake_forge.rs`.
#[path = "../fixtures/fake_forge.rs"]
mod fake_forge;
#[path = "../fixtures/fake_gitlab.rs"]
mod fake_gitlab;

fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let server = fake_gitlab::start_on(&addr);
    println!("{}", server.url);
    loop {
        std::thread::park();
    }
}
