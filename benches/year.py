#!/usr/bin/env python3
"""year.py REPO [EVENTS] [TASKS] [END] — a year of history: EVENTS ledger events (default
100,000) over TASKS tasks (default 1,000), as git-recode stores them (canonical JSON lines in
the note on each task's anchor blob in refs/notes/recode, anchors reachable from
refs/recode/anchors), written with one `git fast-import` run.

Task i starts on day i * 365 / TASKS of the year ending at END (default
2026-11-20T12:00:00Z, the tests' clock) and its events follow every 20 minutes: spawn,
milestones, exits (transient, then done), gates, resumes, attempt numbers rising. A few tasks
end needing a human (an exit with outcome `error` after three attempts), so `report` has a
queue. Deterministic: the same arguments write the same objects."""
import datetime as dt
import hashlib
import json
import subprocess
import sys

repo = sys.argv[1]
total = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
ntasks = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000
end = dt.datetime.fromisoformat((sys.argv[4] if len(sys.argv) > 4 else "2026-11-20T12:00:00Z").replace("Z", "+00:00"))
start = end - dt.timedelta(days=365)
per = max(1, total // ntasks)


def git(*args, inp=None):
    return subprocess.run(["git", "-C", repo, *args], input=inp, capture_output=True, check=True).stdout


def ts(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def events(task):
    branch = f"feat/issue-{task}-work"
    t0 = start + dt.timedelta(seconds=(task - 1) * 365 * 86400 // ntasks)
    attempt, out = 0, []
    for i in range(per):
        t = t0 + dt.timedelta(minutes=20 * i)
        ev = {"v": 1, "ts": ts(t), "seq": i + 1, "task": str(task), "branch": branch}
        phase = i % 10
        if phase == 0:
            attempt += 1
            ev.update(kind="spawn" if attempt == 1 else "resume", attempt=attempt, cwd=f"/work/{branch}",
                      host="bench", session_id=f"s-{task}-{attempt}", pid=100000 + task, agent="claude")
        elif phase in (1, 2, 3, 5, 6):
            ev.update(kind="milestone", phase=["scoped", "tests", "implemented", "scoped", "tests"][phase % 5],
                      head=f"{task:08x}{i:032x}")
        elif phase == 4:
            ev.update(kind="gate", passed=i % 20 == 4, by="record")
        elif phase == 9 and i + 1 == per and task % 50 == 0:
            ev.update(kind="exit", rc=1, outcome="needs-human", message=f"task {task}: the build fails and the agent gave up")
        elif phase == 9:
            ev.update(kind="exit", rc=1, outcome="transient", message="Claude AI usage limit reached|1784106000")
        else:
            ev.update(kind="milestone", phase="implemented", head=f"{task:08x}{i:032x}")
        out.append(json.dumps(ev, sort_keys=True, separators=(",", ":")))
    return "\n".join(out) + "\n"


def blob_cmd(mark, data):
    b = data.encode()
    return b"blob\nmark :%d\ndata %d\n" % (mark, len(b)) + b + b"\n"


# Anchors and notes as blobs with marks, then one notes commit (the notes tree by anchor id,
# fanout-free, as `git notes` writes small ledgers) and one anchors commit.
stream = bytearray()
anchors = []
for task in range(1, ntasks + 1):
    anchor = f"recode-task {task}\n"
    stream += blob_cmd(2 * task - 1, anchor)
    stream += blob_cmd(2 * task, events(task))
    anchors.append(task)
when = int(end.timestamp())
stream += b"commit refs/notes/recode\nmark :%d\ncommitter bench <bench@example.invalid> %d +0000\ndata 15\nrecode: ledger\n" % (2 * ntasks + 1, when)
for task in anchors:
    # fast-import's `N` annotates commits only: the notes tree written by hand, one
    # entry named by the anchor blob's id (no fanout), as `git notes` writes it.
    anchor = f"recode-task {task}\n".encode()
    aid = hashlib.sha1(b"blob %d\0" % len(anchor) + anchor).hexdigest()
    stream += b"M 100644 :%d %s\n" % (2 * task, aid.encode())
stream += b"\n"
stream += b"commit refs/recode/anchors\nmark :%d\ncommitter bench <bench@example.invalid> %d +0000\ndata 16\nrecode: anchors\n" % (2 * ntasks + 2, when)
# Anchors are kept reachable by a tree holding each anchor blob (named by its task).
for task in anchors:
    stream += b"M 100644 :%d anchor-%d\n" % (2 * task - 1, task)
stream += b"\n"
git("fast-import", "--quiet", inp=bytes(stream))
print(f"{per * ntasks} events over {ntasks} tasks, {ts(start)} .. {ts(end)}")
