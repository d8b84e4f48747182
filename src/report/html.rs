//! The report as one self-contained HTML page: inline CSS and SVG, no script, no external
//! URL or font (SPEC Commands: `report --html`). Rendered by minijinja from
//! `page.html` (HTML auto-escaping on); the geometry of the SVG timeline is computed here.

use jiff::Timestamp;
use serde::Serialize;

use super::secs;
use crate::clock;
use crate::wire::{AttemptJson, ReportDoc, TaskHistoryJson};

/// The template.
const PAGE: &str = include_str!("page.html");

/// Width of the timeline's plot area, in SVG user units (px).
const PLOT: f64 = 860.0;
/// Left margin of the timeline (task labels), px.
const LABEL: f64 = 220.0;
/// Height of one task's row, px.
const ROW: f64 = 28.0;

#[derive(Serialize)]
struct Bar {
    x: f64,
    w: f64,
    class: String,
    title: String,
}

#[derive(Serialize)]
struct Mark {
    x: f64,
    kind: String,
    symbol: &'static str,
    title: String,
}

#[derive(Serialize)]
struct Lane {
    y: f64,
    task: String,
    label: String,
    hosts: String,
    bars: Vec<Bar>,
    marks: Vec<Mark>,
}

#[derive(Serialize)]
struct AxisTick {
    x: f64,
    anchor: &'static str,
    label: String,
}

#[derive(Serialize)]
struct Strip {
    x: f64,
    w: f64,
    title: String,
}

#[derive(Serialize)]
struct Page<'a> {
    doc: &'a ReportDoc,
    now: String,
    window: String,
    summary: String,
    lanes: Vec<Lane>,
    axis: Vec<AxisTick>,
    height: f64,
    label_w: f64,
    plot_w: f64,
    total_w: f64,
    runs: Vec<Strip>,
    gaps: Vec<Strip>,
    period: Option<String>,
    day_max: u32,
}

fn t(s: &Timestamp) -> Timestamp {
    *s
}

fn when(s: &Timestamp) -> String {
    t(s).strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// A mark's symbol on the timeline.
fn symbol(kind: &str) -> &'static str {
    match kind {
        "milestone" => "◆",
        "wip" => "W",
        "published" => "P",
        "deleted" => "✕",
        "escalated" => "!",
        "gate" => "✓",
        "cleared" => "C",
        "unblocked" => "U",
        "phantom" => "?",
        _ => "·",
    }
}

/// The timeline's horizontal scale: a time's x from the span's start `from` over
/// `total` seconds (at least 1) to the plot's width.
#[derive(Clone, Copy)]
struct Scale {
    from: Timestamp,
    total: f64,
}

impl Scale {
    /// The x of the RFC 3339 time `s`, clamped to the plot.
    fn x(&self, s: &Timestamp) -> f64 {
        LABEL + (secs(self.from, t(s)).clamp(0, self.total as i64) as f64 / self.total) * PLOT
    }
}

/// One attempt's bar: from its start to its end (`now` when open, at least 4 px wide),
/// classed by its outcome (`open` without one), its title the attempt in words.
fn bar(a: &AttemptJson, now: &Timestamp, scale: Scale) -> Bar {
    let x0 = scale.x(&a.start);
    let x1 = scale.x(a.end.as_ref().unwrap_or(now));
    let outcome = a.outcome.clone().unwrap_or_else(|| "open".into());
    Bar {
        x: x0,
        w: (x1 - x0).max(4.0),
        class: outcome.clone(),
        title: format!(
            "attempt {} on {}: {} to {}, {}{}",
            a.attempt,
            a.host.as_deref().unwrap_or("an unknown host"),
            when(&a.start),
            a.end
                .as_ref()
                .map(when)
                .unwrap_or_else(|| "now (no exit)".into()),
            outcome,
            a.message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ),
    }
}

/// Task `k`'s row `i` of the timeline: its labels, attempts' bars and marks.
fn lane(i: usize, k: &TaskHistoryJson, now: &Timestamp, scale: Scale) -> Lane {
    Lane {
        y: 30.0 + i as f64 * ROW,
        task: k.task.clone(),
        label: super::first_line(&format!("{} {}", k.task, k.branches.join(", ")), 30),
        hosts: super::first_line(&k.hosts.join(", "), 14),
        bars: k.attempts.iter().map(|a| bar(a, now, scale)).collect(),
        marks: k
            .marks
            .iter()
            .map(|m| Mark {
                x: scale.x(&m.ts),
                kind: m.kind.clone(),
                symbol: symbol(&m.kind),
                title: format!("{}: {}", when(&m.ts), m.detail),
            })
            .collect(),
    }
}

/// The time axis: five ticks over the span, the first anchored at its start, the last
/// at its end.
fn axis(scale: Scale) -> Vec<AxisTick> {
    (0..=4)
        .map(|i| {
            let at = scale.from.as_second() + (scale.total as i64) * i / 4;
            let at = clock::from_secs(at);
            AxisTick {
                x: scale.x(&at),
                anchor: match i {
                    0 => "start",
                    4 => "end",
                    _ => "middle",
                },
                label: t(&at).strftime("%m-%d %H:%M").to_string(),
            }
        })
        .collect()
}

/// The recover runs' strips (at least 2 px wide) and the gaps' strips (an open gap to
/// `now`).
fn tick_strips(doc: &ReportDoc, scale: Scale) -> (Vec<Strip>, Vec<Strip>) {
    let runs = doc
        .ticks
        .runs
        .iter()
        .map(|r| Strip {
            x: scale.x(&r.start),
            w: (scale.x(&r.end) - scale.x(&r.start)).max(2.0),
            title: format!("{}: {} events, {} tasks", when(&r.start), r.events, r.tasks),
        })
        .collect();
    let gaps = doc
        .ticks
        .gaps
        .iter()
        .map(|g| {
            let to = g.to.as_ref().unwrap_or(&doc.now);
            Strip {
                x: scale.x(&g.from),
                w: (scale.x(to) - scale.x(&g.from)).max(2.0),
                title: format!(
                    "down {} from {}",
                    clock::human_secs(g.seconds),
                    when(&g.from)
                ),
            }
        })
        .collect();
    (runs, gaps)
}

/// The template's values for `doc`: the texts, the timeline's geometry, the strips.
fn page(doc: &ReportDoc) -> Page<'_> {
    let now = t(&doc.now);
    let (from, _) = super::text::span_of(doc);
    let scale = Scale {
        from,
        total: secs(from, now).max(1) as f64,
    };
    let lanes: Vec<Lane> = doc
        .tasks
        .iter()
        .enumerate()
        .map(|(i, k)| lane(i, k, &doc.now, scale))
        .collect();
    let (runs, gaps) = tick_strips(doc, scale);
    Page {
        doc,
        now: when(&doc.now),
        summary: super::text::summary(doc),
        window: doc
            .since
            .as_ref()
            .map(|s| format!("since {}", when(s)))
            .unwrap_or_else(|| "the whole ledger".into()),
        height: 40.0 + lanes.len() as f64 * ROW,
        lanes,
        axis: axis(scale),
        label_w: LABEL,
        plot_w: PLOT,
        total_w: LABEL + PLOT + 20.0,
        runs,
        gaps,
        period: doc.ticks.period_seconds.map(clock::human_secs),
        day_max: doc
            .days
            .iter()
            .flat_map(|d| d.outcomes.values())
            .copied()
            .max()
            .unwrap_or(0)
            .max(1),
    }
}

/// Render `doc` as the page.
///
/// Errors: a template error (a bug: the template is part of the binary), as text.
pub(crate) fn render(doc: &ReportDoc) -> Result<String, String> {
    let page = page(doc);
    let mut env = minijinja::Environment::new();
    // `{{ ts|when }}`: an RFC 3339 time as `11-20 12:00` (UTC), for the tables.
    env.add_filter("when", |s: String| {
        super::at(&s).strftime("%m-%d %H:%M").to_string()
    });
    env.add_template("report.html", PAGE)
        .map_err(|e| e.to_string())?;
    let tmpl = env.get_template("report.html").map_err(|e| e.to_string())?;
    tmpl.render(minijinja::Value::from(minijinja::value::Serde(&page)))
        .map_err(|e| e.to_string())
}
