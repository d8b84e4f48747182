//! `git-recode`: see the library crate for everything.
fn main() {
    std::process::exit(git_recode::cli::main());
}
