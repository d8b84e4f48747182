#!/usr/bin/env python3
"""ledger.py REPO EVENTS — write EVENTS ledger events, spread over the repository's
feat/issue-N-* worker tasks, as git-recode stores them (canonical JSON lines in the note
on each task's anchor blob in refs/notes/recode; anchors reachable from
refs/recode/anchors), using plain git."""
import json, subprocess, sys

repo, total = sys.argv[1], int(sys.argv[2])
git = lambda *a, inp=None: subprocess.run(["git", "-C", repo, *a], input=inp, capture_output=True, text=True, check=True).stdout.strip()
branches = [b for b in git("for-each-ref", "--format=%(refname:short)", "refs/heads/feat/").split("\n") if b]
tasks = [b.split("issue-")[1].split("-")[0] for b in branches]
per = max(1, total // max(1, len(tasks)))
anchors = []
kinds = ["spawn", "milestone", "exit", "gate", "resume"]
for n, (task, branch) in enumerate(zip(tasks, branches)):
    anchor = git("hash-object", "-w", "--stdin", inp=f"recode-task {task}\n")
    anchors.append(anchor)
    lines = []
    for i in range(per):
        k = kinds[i % len(kinds)]
        ev = {"v": 1, "ts": f"2026-11-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z", "seq": i + 1,
              "task": task, "branch": branch, "kind": k}
        if k in ("spawn", "resume"):
            ev.update(attempt=i // 5 + 1, cwd="/nowhere", host="bench", session_id=f"s-{task}-{i}")
        elif k == "exit":
            ev.update(rc=1, outcome="transient", message="Claude AI usage limit reached|1784106000")
        elif k == "milestone":
            ev.update(phase="scoped", head="0" * 40)
        elif k == "gate":
            ev.update(passed=False, by="record", head="0" * 40)
        lines.append(json.dumps(ev, sort_keys=True, separators=(",", ":")))
    blob = git("hash-object", "-w", "--stdin", inp="\n".join(lines) + "\n")
    git("notes", "--ref=recode", "add", "-f", "-C", blob, anchor)
tree = git("mktree", inp="".join(f"100644 blob {a}\t{a}\n" for a in sorted(set(anchors))))
commit = git("commit-tree", tree, "-m", "recode: anchors")
git("update-ref", "refs/recode/anchors", commit)
print(f"{per * len(tasks)} events over {len(tasks)} tasks")
