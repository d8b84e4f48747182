//! `git-recode`: see the library crate for everything.
fn main() {
    // git reads an empty XDG_CONFIG_HOME as unset ($HOME/.config): so must gix, which
    // otherwise misses the user's global ignore file and attributes. Removed here, before
    // any thread starts.
    if std::env::var_os("XDG_CONFIG_HOME").is_some_and(|v| v.is_empty()) {
        // SAFETY: single-threaded at this point; nothing else reads the environment yet.
        unsafe { std::env::remove_var("XDG_CONFIG_HOME") };
    }
    std::process::exit(git_recode::main());
}
