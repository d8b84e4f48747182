//! This host's identity (SPEC 1.3 "Several machines, by the observer's clock"):
//! `recode.hostId`, generated once per machine and clone; the hostname is only its label.
//!
//! A generated id is `<machine>-<clone>`: 12 hex digits of a hash of the machine id
//! (`/etc/machine-id`, else `/var/lib/dbus/machine-id`, else the hostname at generation
//! time — never the machine id itself, which systemd asks to keep private) and 8 hex digits
//! of a hash of the machine id with the clone's common git dir. Two clones on one machine
//! are two hosts (each writes its own heartbeat, which lists only its own workers), and the
//! machine part lets a clone probe a pid that another clone of this machine recorded. The
//! id is a pure function of the machine and the clone's path, written to the clone's
//! config (`recode.hostId`) on first use: two processes that generate it at once write the
//! same value, and a clone moved afterwards keeps it.

use gix::bstr::ByteSlice;

/// The config key of this host's identity.
pub(crate) const HOST_ID: &str = "recode.hostId";

/// This host: its identity and its label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Me {
    /// `recode.hostId` (what `host` fields, heartbeats and claims carry).
    pub id: String,
    /// The hostname (`process::hostname()`): shown beside the id, never compared.
    pub label: String,
    /// The machine part of a generated id on this machine.
    pub machine: String,
}

/// The hex of git's blob hash of `text` (a stable digest, on every clone and machine).
pub(crate) fn digest(text: &str) -> String {
    gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        text.as_bytes(),
    )
    .map(|id| id.to_hex().to_string())
    .unwrap_or_else(|_| "0".repeat(40))
}

/// What identifies this machine: its machine id where there is one, else its hostname.
fn machine_seed() -> String {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| format!("hostname {}", crate::process::hostname()))
}

/// This machine's part of a generated id.
fn machine_part(seed: &str) -> String {
    digest(&format!("recode-machine {seed}"))[..12].to_string()
}

/// Whether `id` has the shape of a generated id (`<12 hex>-<8 hex>`).
pub(crate) fn is_generated(id: &str) -> bool {
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    id.split_once('-')
        .is_some_and(|(m, c)| hex(m, 12) && hex(c, 8))
}

/// The id generated for the clone whose common dir is `common` on this machine.
pub(crate) fn generate(common: &std::path::Path) -> String {
    let seed = machine_seed();
    let path = std::fs::canonicalize(common).unwrap_or_else(|_| common.to_path_buf());
    let clone = digest(&format!("recode-clone {seed}\n{}", path.display()));
    format!("{}-{}", machine_part(&seed), &clone[..8])
}

/// This host: `recode.hostId` from the repository's config, else generated and written to
/// the clone's config (best effort: a clone whose config cannot be written still gets the
/// same generated id on every run). The write is a git run killed past `timeout`
/// (`recode.commandTimeout`).
pub(crate) fn me(repo: &gix::Repository, timeout: std::time::Duration) -> Me {
    let configured = repo
        .config_snapshot()
        .string(HOST_ID)
        .map(|v| v.to_str_lossy().trim().to_string())
        .filter(|v| !v.is_empty());
    let id = configured.unwrap_or_else(|| {
        let id = generate(repo.common_dir());
        let file = repo.common_dir().join("config");
        let file = file.to_string_lossy();
        let wrote = crate::git::run(
            repo.common_dir(),
            timeout,
            &["config", "--file", &file, HOST_ID, &id],
        );
        if let Err(e) = wrote {
            tracing::debug!(error = %e, "cannot write {HOST_ID}");
        }
        id
    });
    Me {
        id,
        label: crate::process::hostname(),
        machine: machine_part(&machine_seed()),
    }
}

impl Me {
    /// Whether an attempt's `host` is this host: its id; or, only for an entry that names
    /// no id (`by_id` false: it carries no `label`, as written before 1.3, when `host` was
    /// the hostname), this machine's hostname (never a generated id). An entry that carries
    /// its writer's label names a `recode.hostId`: one equal to this hostname is another
    /// host that chose it (SPEC 1.3: the hostname is only a label).
    pub(crate) fn is_named(&self, host: &str, by_id: bool) -> bool {
        host == self.id || (!by_id && host == self.label && !is_generated(host))
    }

    /// Whether a pid recorded by `host` (named by id or not, as in [`Me::is_named`]) was
    /// recorded on this machine, so it can be probed here: this host, or another clone of
    /// this machine (a generated id with this machine's part).
    pub(crate) fn same_machine(&self, host: &str, by_id: bool) -> bool {
        self.is_named(host, by_id)
            || (is_generated(host) && host.split('-').next() == Some(&self.machine))
    }

    /// The host as shown: `label (id)` when they differ, else the id.
    pub(crate) fn shown(&self) -> String {
        shown(&self.id, Some(&self.label))
    }
}

pub(crate) use crate::model::host_shown as shown;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_id_is_stable_per_clone_and_differs_between_clones() {
        let a = generate(std::path::Path::new("/tmp/a/.git"));
        assert_eq!(a, generate(std::path::Path::new("/tmp/a/.git")));
        let b = generate(std::path::Path::new("/tmp/b/.git"));
        assert_ne!(a, b);
        assert!(is_generated(&a) && is_generated(&b), "{a} {b}");
        assert_eq!(a.split('-').next(), b.split('-').next(), "one machine");
        assert!(!is_generated("hostA"));
        assert!(!is_generated("0123456789ab-0123456z"));
    }

    #[test]
    fn this_host_is_its_id_whatever_its_label_and_a_pid_of_this_machine_is_probed() {
        let me = Me {
            id: "0123456789ab-00000001".into(),
            label: "laptop.lan".into(),
            machine: "0123456789ab".into(),
        };
        assert!(me.is_named("0123456789ab-00000001", true));
        assert!(me.is_named("laptop.lan", false), "a 1.2 ledger's hostname");
        assert!(
            !me.is_named("laptop.lan", true),
            "another host whose recode.hostId is this hostname"
        );
        assert!(!me.same_machine("laptop.lan", true));
        assert!(!me.is_named("laptop.local", false));
        assert!(
            !me.is_named("0123456789ab-00000002", true),
            "another clone is another host"
        );
        assert!(me.same_machine("0123456789ab-00000002", true));
        assert!(!me.same_machine("ffffffffffff-00000001", true));
        assert_eq!(me.shown(), "laptop.lan (0123456789ab-00000001)");
        assert_eq!(shown("hostA", Some("hostA")), "hostA");
        assert_eq!(shown("hostA", None), "hostA");
    }
}
