//! The latency monitor (LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR)
//! and LATENCY HISTOGRAM. With `latency-monitor-threshold` set to N ms, an
//! event that takes N ms or more (a command, a fast command, an active
//! expiry pass) is sampled: one sample per event and second (the largest),
//! the last 160 kept, with the largest ever seen.

use bytes::Bytes;
use ebb_core::table::flag;
use ebb_core::{CommandSpec, Reply};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Samples kept per event.
const SAMPLES: usize = 160;

/// `latency-monitor-threshold` in milliseconds (0: off).
static THRESHOLD_MS: AtomicU64 = AtomicU64::new(0);

#[derive(Default)]
struct Event {
    /// (unix seconds, milliseconds), oldest first.
    samples: Vec<(u64, u64)>,
    max: u64,
}

static EVENTS: Mutex<BTreeMap<&'static str, Event>> = Mutex::new(BTreeMap::new());

fn events() -> std::sync::MutexGuard<'static, BTreeMap<&'static str, Event>> {
    EVENTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads `latency-monitor-threshold`.
pub fn configure(cfg: &crate::config::Config) {
    let ms = cfg.get_i64("latency-monitor-threshold").max(0) as u64;
    THRESHOLD_MS.store(ms, Ordering::Relaxed);
}

/// Records `took` for `event` if the monitor is on and it reached the
/// threshold.
pub fn sample(event: &'static str, took: Duration) {
    let threshold = THRESHOLD_MS.load(Ordering::Relaxed);
    let ms = took.as_millis() as u64;
    if threshold == 0 || ms < threshold {
        return;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let mut ev = events();
    let e = ev.entry(event).or_default();
    e.max = e.max.max(ms);
    match e.samples.last_mut() {
        Some(last) if last.0 == now => last.1 = last.1.max(ms),
        _ => {
            if e.samples.len() == SAMPLES {
                e.samples.remove(0);
            }
            e.samples.push((now, ms));
        }
    }
}

/// A command's duration: the `command` event, or `fast-command` for a
/// constant-time one.
pub fn command(took: Duration, spec: &CommandSpec) {
    if THRESHOLD_MS.load(Ordering::Relaxed) == 0 {
        return;
    }
    let event = if spec.has(flag::FAST) {
        "fast-command"
    } else {
        "command"
    };
    sample(event, took);
}

const HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
];

/// LATENCY and its subcommands (arity checked before).
pub fn latency(argv: &[&[u8]]) -> Reply {
    let sub = argv[1].to_ascii_lowercase();
    match &sub[..] {
        b"latest" => Reply::Array(
            events()
                .iter()
                .filter_map(|(name, e)| {
                    let (t, ms) = *e.samples.last()?;
                    Some(Reply::Array(vec![
                        Reply::text(*name),
                        Reply::Int(t as i64),
                        Reply::Int(ms as i64),
                        Reply::Int(e.max as i64),
                    ]))
                })
                .collect(),
        ),
        b"history" => {
            let ev = events();
            let Some(e) = std::str::from_utf8(argv[2]).ok().and_then(|n| ev.get(n)) else {
                return Reply::Array(vec![]);
            };
            Reply::Array(
                e.samples
                    .iter()
                    .map(|&(t, ms)| Reply::Array(vec![Reply::Int(t as i64), Reply::Int(ms as i64)]))
                    .collect(),
            )
        }
        b"reset" => {
            let mut ev = events();
            if argv.len() == 2 {
                let n = ev.len();
                ev.clear();
                return Reply::Int(n as i64);
            }
            let mut n = 0;
            for a in &argv[2..] {
                if let Some(k) = std::str::from_utf8(a)
                    .ok()
                    .and_then(|s| ev.keys().find(|k| **k == s).copied())
                {
                    ev.remove(k);
                    n += 1;
                }
            }
            Reply::Int(n)
        }
        b"graph" => graph(argv[2]),
        b"doctor" => Reply::Verbatim(Bytes::from(doctor())),
        b"histogram" => crate::cmdstats::latency_histogram(&argv[2..]),
        b"help" => Reply::Array(HELP.iter().map(|l| Reply::Simple((*l).into())).collect()),
        _ => ebb_core::error::unknown_subcommand(argv[1], "latency").into(),
    }
}

/// An event's samples as text: a header with the range, then one line per
/// sample, oldest first, with a bar scaled to the largest.
fn graph(name: &[u8]) -> Reply {
    let ev = events();
    let Some(e) = std::str::from_utf8(name).ok().and_then(|n| ev.get(n)) else {
        return Reply::Error(
            format!(
                "ERR No samples available for event '{}'",
                String::from_utf8_lossy(name)
            )
            .into(),
        );
    };
    let high = e.samples.iter().map(|s| s.1).max().unwrap_or(0);
    let low = e.samples.iter().map(|s| s.1).min().unwrap_or(0);
    let mut out = format!(
        "{} - high {high} ms, low {low} ms (all time high {} ms)\n",
        String::from_utf8_lossy(name),
        e.max
    );
    out.push_str(&"-".repeat(80));
    out.push('\n');
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    for &(t, ms) in &e.samples {
        let bar = (ms * 50).checked_div(high).unwrap_or(0) as usize;
        out.push_str(&format!(
            "{:>6}s ago {:>6} ms |{}\n",
            now.saturating_sub(t),
            ms,
            "#".repeat(bar.max(1))
        ));
    }
    Reply::Verbatim(Bytes::from(out))
}

/// A short report of the events seen and what usually causes them.
fn doctor() -> String {
    let ev = events();
    if THRESHOLD_MS.load(Ordering::Relaxed) == 0 && ev.is_empty() {
        return "The latency monitor is off: set latency-monitor-threshold to a number of \
                milliseconds to record events that take at least that long.\n"
            .into();
    }
    if ev.is_empty() {
        return "No latency spike was recorded since the monitor started or was reset.\n".into();
    }
    let mut s = String::from("Latency spikes were recorded:\n\n");
    for (name, e) in ev.iter() {
        let n = e.samples.len() as u64;
        let avg = e
            .samples
            .iter()
            .map(|x| x.1)
            .sum::<u64>()
            .checked_div(n)
            .unwrap_or(0);
        s.push_str(&format!(
            "{name}: {n} samples, average {avg} ms, all time high {} ms.\n",
            e.max
        ));
    }
    s.push_str("\nAdvice:\n");
    if ev.contains_key("command") || ev.contains_key("fast-command") {
        s.push_str(
            "- Slow commands: see SLOWLOG GET for which ones; commands over large \
             collections (KEYS, SMEMBERS, LRANGE 0 -1, ...) take time in proportion \
             to their size.\n",
        );
    }
    if ev.contains_key("expire-cycle") {
        s.push_str(
            "- Active expiry: many keys or members expiring at the same moment are \
             reclaimed in slices; spreading deadlines spreads the work.\n",
        );
    }
    s
}
