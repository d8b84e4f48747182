use super::*;

#[test]
fn heartbeat_lists_workers_and_the_alive_ones() {
    let h = parse_heartbeat(
        "ref-name",
        r#"{"host":"box","ts":"2026-11-20T11:00:00Z","workers":{"a":{"pid":1,"alive":true},"b":{"pid":2,"alive":false},"c":{}}}"#,
    )
    .unwrap();
    assert_eq!(h.host, "box");
    assert_eq!(h.ts, "2026-11-20T11:00:00Z");
    assert_eq!((h.worker_count(), h.alive_count()), (3, 1));
    assert_eq!(h.workers.get("a"), Some(&true));
    assert_eq!(h.workers.get("c"), Some(&false));
    assert_eq!(
        parse_heartbeat("r", r#"{"ts":"x"}"#).unwrap().host,
        "r",
        "no host in the blob: the ref's"
    );
    assert_eq!(parse_heartbeat("r", r#"{"ts":"x"}"#).unwrap().at, None);
    assert_eq!(parse_heartbeat("r", "{}").unwrap_err(), "no \"ts\" string");
    assert!(
        parse_heartbeat("r", "nope")
            .unwrap_err()
            .starts_with("not JSON")
    );
}

#[test]
fn odd_host_names_become_one_valid_ref_component_and_never_collide() {
    assert_eq!(ref_component("box-1.lan"), "box-1.lan");
    assert_eq!(sanitized("my box:2/x"), "my-box-2-x");
    assert_eq!(sanitized("..weird..name.lock"), "weird.name");
    assert_eq!(sanitized("-dash"), "-dash");
    assert_eq!(sanitized("~^*?[\\"), "------");
    assert_eq!(sanitized(""), "unknown-host");
    assert_eq!(sanitized("é"), "-");
    let odd = ref_component("my box:2/x");
    assert!(
        odd.starts_with("my-box-2-x-") && odd.len() == "my-box-2-x-".len() + 8,
        "{odd}"
    );
    assert_ne!(ref_component("hostB."), ref_component("hostB"));
    assert_eq!(ref_component("hostB"), "hostB");
    for h in [
        "my box:2/x",
        "..weird..name.lock",
        "~^*?[\\",
        "a@{b}",
        "hostB.",
    ] {
        let name = heartbeat_ref(h);
        let full: Result<gix::refs::FullName, _> = name.as_str().try_into();
        assert!(full.is_ok(), "{name} is a valid ref name");
    }
    assert_eq!(side_branch("issue-1", "a-b"), "recode/takeover/issue-1/a-b");
}

fn ev(i: usize, branch: &str, body: Body) -> Event {
    let t = crate::clock::parse("2026-11-29T12:00:00Z").unwrap();
    let mut e = Event::new(t, "1", Some(branch), body);
    e.seq = i as u64;
    e
}

#[test]
fn a_worker_belongs_to_the_host_of_its_newest_attempt() {
    let events = vec![
        ev(1, "issue-1", Body::test_spawn("a")),
        ev(2, "issue-1", Body::test_resume(2, None)),
        ev(3, "issue-2", Body::test_spawn("c")),
    ];
    assert_eq!(newest_attempt(&events, "issue-1"), Some((1, "a".into())));
    let mut more = events.clone();
    more.push(ev(4, "issue-1", Body::test_resume(2, Some("b"))));
    assert_eq!(newest_attempt(&more, "issue-1"), Some((3, "b".into())));
    assert_eq!(newest_attempt(&more, "issue-3"), None);
}

#[test]
fn a_takeover_counts_only_after_this_hosts_own_attempt() {
    let take = |i| {
        ev(
            i,
            "issue-1",
            Body::Takeover {
                from_host: "a".into(),
                host: "b".into(),
            },
        )
    };
    let mut events = vec![
        ev(1, "issue-1", Body::test_spawn("a")),
        take(2),
        ev(3, "issue-1", Body::test_resume(2, Some("b"))),
    ];
    let me = |id: &str| Me {
        id: id.into(),
        label: "x".into(),
        machine: "m".into(),
    };
    assert_eq!(
        taken_from(&events, "issue-1", &me("a")),
        Some((1, "b".into()))
    );
    assert_eq!(taken_from(&events, "issue-1", &me("b")), None);
    events.push(ev(4, "issue-1", Body::test_resume(2, Some("a"))));
    assert_eq!(
        taken_from(&events, "issue-1", &me("a")),
        None,
        "resumed here again"
    );
}

/// An exit written on host `a` names `a`'s newest attempt, though this ledger already shows
/// `b`'s takeover after it; on a host with no attempt of its own, the newest attempt.
#[test]
fn an_exit_names_this_hosts_newest_attempt() {
    use crate::model::event::Ends;
    let events = vec![
        ev(1, "issue-1", Body::test_spawn("a")),
        ev(2, "issue-1", Body::test_resume(2, Some("b"))),
    ];
    let ends = |attempt: u32, host: &str| {
        Some(Ends {
            attempt,
            host: host.into(),
        })
    };
    assert_eq!(ends_now(&events, "issue-1", |x, _| x == "a"), ends(1, "a"));
    assert_eq!(ends_now(&events, "issue-1", |x, _| x == "b"), ends(2, "b"));
    assert_eq!(ends_now(&events, "issue-1", |x, _| x == "c"), ends(2, "b"));
    assert_eq!(ends_now(&events, "issue-2", |x, _| x == "a"), None);
}

/// SPEC 1.3: an attempt that carries its writer's label names its host by
/// `recode.hostId`: another host whose id is this hostname is that host, here and in a
/// takeover of its worker. One without a label (1.2: the hostname) is still this host's.
#[test]
fn a_labelled_attempt_is_this_hosts_only_by_id_an_unlabelled_one_also_by_hostname() {
    let me = Me {
        id: "0123456789ab-00000001".into(),
        label: "ubuntu".into(),
        machine: "0123456789ab".into(),
    };
    let labelled = |attempt: u32| Body::Resume {
        attempt,
        session_id: None,
        prompt_sha: None,
        host: Some("ubuntu".into()),
        label: Some("build-b".into()),
    };
    let old = vec![ev(1, "issue-1", Body::test_spawn("ubuntu"))];
    assert!(newest_is_mine(&old, "issue-1", &me), "a 1.2 ledger");
    let mut events = old.clone();
    events.push(ev(2, "issue-1", labelled(2)));
    assert!(!newest_is_mine(&events, "issue-1", &me));
    assert_eq!(
        newest_attempt(&events, "issue-1"),
        Some((1, "ubuntu".into()))
    );
    let here = |h: &str, by_id: bool| me.is_named(h, by_id);
    assert_eq!(
        ends_now(&events, "issue-1", here),
        Some(crate::model::event::Ends {
            attempt: 1,
            host: "ubuntu".into()
        }),
        "this host's own 1.2 attempt"
    );
    // B (`ubuntu` by id) taken over by C: nothing was taken from this host.
    let take = |from: &str| Body::Takeover {
        from_host: from.into(),
        host: "c".into(),
    };
    events.push(ev(3, "issue-1", take("ubuntu")));
    assert_eq!(taken_from(&events, "issue-1", &me), None);
    // This host's 1.2 attempt taken over under its hostname: taken from it.
    let mut taken = old;
    taken.push(ev(2, "issue-1", take("ubuntu")));
    assert_eq!(taken_from(&taken, "issue-1", &me), Some((1, "c".into())));
}
