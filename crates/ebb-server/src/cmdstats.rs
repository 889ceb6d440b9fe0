//! Per-command statistics, as Redis keeps them: INFO `commandstats` (calls,
//! time, rejected and failed calls), `errorstats` (error replies by their
//! code), `latencystats` (latency percentiles per command, with
//! `latency-tracking` and `latency-tracking-info-percentiles`) and the
//! `total_error_replies` counter.
//!
//! Durations are counted in processor time-stamp ticks where the processor
//! has a constant one (a counter read costs less than a clock read), and
//! converted to microseconds only when INFO reports them.

use bytes::Bytes;
use ebb_core::{CommandSpec, Reply};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{OnceLock, RwLock};
use std::time::Instant;

/// Counters of one command (or one subcommand of a container command).
struct Slot {
    name: String,
    /// A subcommand's own arity (0 for a command: its table entry has it).
    arity: i32,
    /// Whether it may run while the dataset loads (flag `loading`).
    loading: bool,
    /// Whether it writes (flag `write`).
    writes: bool,
    /// Whether it is administrative (flag `admin`).
    admin: bool,
    calls: AtomicU64,
    ticks: AtomicU64,
    rejected: AtomicU64,
    failed: AtomicU64,
    hist: OnceLock<Box<[AtomicU64]>>,
}

impl Slot {
    fn new(name: String) -> Slot {
        let flag = |f: &str| match ebb_core::keyspecs::subcommand(&name) {
            Some(sub) => sub.flags.split_ascii_whitespace().any(|x| x == f),
            None => ebb_core::lookup(name.as_bytes()).is_some_and(|s| s.has_flag(f)),
        };
        Slot {
            arity: ebb_core::table::subcommand_arity(&name).unwrap_or(0),
            loading: flag("loading"),
            writes: flag("write"),
            admin: flag("admin"),
            name,
            calls: AtomicU64::new(0),
            ticks: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            hist: OnceLock::new(),
        }
    }

    fn reset(&self) {
        for c in [&self.calls, &self.ticks, &self.rejected, &self.failed] {
            c.store(0, Ordering::Relaxed);
        }
        if let Some(h) = self.hist.get() {
            for b in h.iter() {
                b.store(0, Ordering::Relaxed);
            }
        }
    }
}

struct Table {
    /// One slot per command table entry (same order), then one per
    /// subcommand of a container command.
    slots: Vec<Slot>,
    /// Whether the command at that table position has subcommands.
    container: Vec<bool>,
    /// `container|sub` to its slot.
    subs: HashMap<String, usize>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let specs = ebb_core::table::all();
        let mut slots: Vec<Slot> = specs.iter().map(|s| Slot::new(s.name.into())).collect();
        let mut container = vec![false; specs.len()];
        let mut subs = HashMap::new();
        for (i, s) in specs.iter().enumerate() {
            for d in ebb_core::docs::subcommands(s.name) {
                container[i] = true;
                subs.insert(d.name.to_string(), slots.len());
                slots.push(Slot::new(d.name.to_string()));
            }
        }
        Table {
            slots,
            container,
            subs,
        }
    })
}

/// The statistics slot of a command as called: its own, or for a container
/// command (CONFIG, CLIENT, …) its subcommand's. `None` for an unknown
/// subcommand, which Redis refuses before any command runs.
pub fn slot_of(spec: &'static CommandSpec, argv: &[&[u8]]) -> Option<usize> {
    let t = table();
    let i = ebb_core::table::index_of(spec);
    if !t.container.get(i).copied().unwrap_or(false) || argv.len() < 2 {
        return Some(i);
    }
    let sub = String::from_utf8_lossy(argv[1]).to_ascii_lowercase();
    t.subs.get(&format!("{}|{sub}", spec.name)).copied()
}

/// Number of slots (commands and subcommands).
pub fn slot_count() -> usize {
    table().slots.len()
}

/// The slot of subcommand `container|sub` (lower case).
pub fn sub_slot(name: &str) -> Option<usize> {
    table().subs.get(name).copied()
}

/// The slots of a container command's subcommands (none for a plain
/// command).
pub fn sub_slots_of(spec: &'static CommandSpec) -> Vec<usize> {
    ebb_core::docs::subcommands(spec.name)
        .iter()
        .filter_map(|d| sub_slot(d.name))
        .collect()
}

/// A command's own slot and its subcommands'.
pub fn slots_of(spec: &'static CommandSpec) -> Vec<usize> {
    let mut v = vec![ebb_core::table::index_of(spec)];
    v.extend(sub_slots_of(spec));
    v
}

/// The whole command name of a slot (`get`, `config|set`).
pub fn slot_name(slot: usize) -> &'static str {
    table().slots.get(slot).map_or("NULL", |s| s.name.as_str())
}

/// Whether the command or subcommand in `slot` may run while the dataset
/// loads (Redis's `loading` flag).
pub fn allowed_while_loading(slot: usize) -> bool {
    table().slots.get(slot).is_some_and(|s| s.loading)
}

/// Whether the command or subcommand in `slot` writes (Redis's `write`
/// flag: FUNCTION LOAD, for one, where FUNCTION LIST does not).
pub fn writes(slot: usize) -> bool {
    table().slots.get(slot).is_some_and(|s| s.writes)
}

/// Whether the command or subcommand in `slot` is administrative (Redis's
/// `admin` flag: ACL SETUSER, CLIENT LIST, SLOWLOG LEN, …).
pub fn admin(slot: usize) -> bool {
    table().slots.get(slot).is_some_and(|s| s.admin)
}

/// The statistics slot of a command without subcommands (`None` for a
/// container command, whose slot depends on its arguments).
pub fn plain_slot(spec: &'static CommandSpec) -> Option<usize> {
    let i = ebb_core::table::index_of(spec);
    (!table().container.get(i).copied().unwrap_or(false)).then_some(i)
}

/// Whether `argc` arguments suit the subcommand in `slot` (always true for
/// a plain command, whose arity was checked already), and its full name.
pub fn sub_arity_ok(slot: usize, argc: usize) -> Result<(), &'static str> {
    let Some(s) = table().slots.get(slot) else {
        return Ok(());
    };
    let ok = match s.arity {
        0 => true,
        a if a > 0 => argc == a as usize,
        a => argc >= a.unsigned_abs() as usize,
    };
    if ok {
        Ok(())
    } else {
        Err(&s.name)
    }
}

// --- time ------------------------------------------------------------------

struct Clock {
    tsc: bool,
    start: Instant,
}

/// Ticks per microsecond, measured at start: every conversion of a
/// duration (INFO, the slow log, how long a clock reading is reused).
static TICKS_PER_US: AtomicU64 = AtomicU64::new(1000);

fn clock() -> &'static Clock {
    static C: OnceLock<Clock> = OnceLock::new();
    C.get_or_init(|| {
        let tsc = cfg!(target_arch = "x86_64")
            && std::fs::read_to_string("/proc/cpuinfo")
                .map(|s| s.contains(" constant_tsc") && s.contains(" nonstop_tsc"))
                .unwrap_or(false);
        let start = Instant::now();
        let start_ticks = if tsc { tsc_now() } else { 0 };
        if tsc {
            // Two milliseconds against the monotonic clock: the rate to
            // within a fraction of a percent.
            while start.elapsed().as_micros() < 2000 {
                std::hint::spin_loop();
            }
            let us = start.elapsed().as_nanos() as f64 / 1000.0;
            let rate = tsc_now().wrapping_sub(start_ticks) as f64 / us;
            TICKS_PER_US.store((rate.round() as u64).max(1), Ordering::Relaxed);
        }
        Clock { tsc, start }
    })
}

/// Whole microseconds in `ticks`.
pub fn ticks_to_us(ticks: u64) -> u64 {
    ticks / TICKS_PER_US.load(Ordering::Relaxed).max(1)
}

/// Ticks in `us` microseconds.
pub fn us_to_ticks(us: u64) -> u64 {
    us.saturating_mul(TICKS_PER_US.load(Ordering::Relaxed))
}

#[cfg(target_arch = "x86_64")]
fn tsc_now() -> u64 {
    // SAFETY: RDTSC has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_now() -> u64 {
    0
}

/// Whether [`ticks`] reads the time-stamp counter (set once the clock is
/// set up, so that a reading costs no lazy-initialisation check).
static TSC: AtomicBool = AtomicBool::new(false);

/// A reading of the duration counter.
pub fn ticks() -> u64 {
    if TSC.load(Ordering::Relaxed) {
        tsc_now()
    } else {
        clock().start.elapsed().as_nanos() as u64
    }
}

/// Microseconds in `ticks`, with a fraction (for reports).
fn ticks_as_us(ticks: u64) -> f64 {
    ticks as f64 / TICKS_PER_US.load(Ordering::Relaxed).max(1) as f64
}

// --- latency histograms ----------------------------------------------------

/// Sub-buckets per power of two: values are kept to within 1/32 (3%).
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    ((e - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The largest value that falls in bucket `b`.
fn bucket_top(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let e = b / SUB + SUB_BITS as u64 - 1;
    let sub = b % SUB;
    let low = (SUB + sub) << (e - SUB_BITS as u64);
    low + ((1u64 << (e - SUB_BITS as u64)) - 1)
}

// --- settings --------------------------------------------------------------

static TRACKING: AtomicBool = AtomicBool::new(true);
/// `None` until configured: Redis's default list.
static PERCENTILES: RwLock<Option<Vec<f64>>> = RwLock::new(None);

/// Reads `latency-tracking` and `latency-tracking-info-percentiles`.
pub fn configure(cfg: &crate::config::Config) {
    TSC.store(clock().tsc, Ordering::Relaxed);
    TRACKING.store(cfg.get_bool("latency-tracking"), Ordering::Relaxed);
    let list = parse_percentiles(
        &cfg.get("latency-tracking-info-percentiles")
            .unwrap_or_default(),
    )
    .unwrap_or_else(|| vec![50.0, 99.0, 99.9]);
    if let Ok(mut p) = PERCENTILES.write() {
        *p = Some(list);
    }
}

/// Parses a percentile list (`50 99 99.9`): each a number from 0 to 100.
pub fn parse_percentiles(s: &str) -> Option<Vec<f64>> {
    s.split_whitespace()
        .map(|w| {
            w.parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && (0.0..=100.0).contains(p))
        })
        .collect()
}

/// A percentile as Redis prints it (`99.9`, `50`).
fn fmt_percentile(p: f64) -> String {
    let s = format!("{p:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// The percentile list in its canonical form, as CONFIG GET shows it.
pub fn canonical_percentiles(list: &[f64]) -> String {
    list.iter()
        .map(|p| fmt_percentile(*p))
        .collect::<Vec<_>>()
        .join(" ")
}

// --- errors ----------------------------------------------------------------

/// Distinct error codes kept before errorstats stops growing (Redis's cap).
const MAX_ERROR_CODES: usize = 128;

static TOTAL_ERRORS: AtomicU64 = AtomicU64::new(0);
static ERRORS: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

/// Counts an error reply: under its code (the text up to the first space,
/// within the first 32 bytes; `ERR` when there is none).
pub fn record_error(text: &str) {
    TOTAL_ERRORS.fetch_add(1, Ordering::Relaxed);
    let head = &text.as_bytes()[..text.len().min(32)];
    let code = match head.iter().position(|&b| b == b' ') {
        Some(i) => &text[..i],
        None => "ERR",
    };
    let mut m = ERRORS.lock();
    if let Some(n) = m.get_mut(code) {
        *n += 1;
    } else if m.len() < MAX_ERROR_CODES {
        m.insert(code.to_string(), 1);
    }
}

/// `total_error_replies`.
pub fn total_errors() -> u64 {
    TOTAL_ERRORS.load(Ordering::Relaxed)
}

// --- recording -------------------------------------------------------------

/// One connection's calls not yet added to the shared counters: a
/// pipeline mostly repeats one command, so its calls are summed locally
/// and published when the command changes or the batch ends, instead of
/// touching shared counters once per command.
#[derive(Debug, Default)]
pub struct Tally {
    slot: usize,
    calls: u64,
    ticks: u64,
    failed: u64,
    /// Calls whose duration fell in histogram bucket `bucket`.
    in_bucket: u64,
    bucket: usize,
}

impl Tally {
    /// Counts a call of the command in `slot` that took `ticks`.
    pub fn add(&mut self, slot: usize, ticks: u64, failed: bool) {
        self.add_run(slot, 1, ticks, failed as u64);
    }

    /// Counts `calls` calls of the command in `slot` run back to back in
    /// `ticks` (each taken to have lasted the average), `failed` of them
    /// failed.
    pub fn add_run(&mut self, slot: usize, calls: u64, ticks: u64, failed: u64) {
        if calls == 0 {
            return;
        }
        if self.calls > 0 && slot != self.slot {
            self.flush();
        }
        self.slot = slot;
        self.calls += calls;
        self.ticks += ticks;
        self.failed += failed;
        let b = bucket_of(ticks / calls);
        if self.in_bucket > 0 && b != self.bucket {
            self.flush_bucket();
        }
        self.bucket = b;
        self.in_bucket += calls;
    }

    fn flush_bucket(&mut self) {
        if self.in_bucket == 0 {
            return;
        }
        if TRACKING.load(Ordering::Relaxed) {
            if let Some(s) = table().slots.get(self.slot) {
                let h = s
                    .hist
                    .get_or_init(|| (0..BUCKETS).map(|_| AtomicU64::new(0)).collect());
                h[self.bucket].fetch_add(self.in_bucket, Ordering::Relaxed);
            }
        }
        self.in_bucket = 0;
    }

    /// Adds the local counts to the shared ones.
    pub fn flush(&mut self) {
        if self.calls == 0 {
            return;
        }
        self.flush_bucket();
        if let Some(s) = table().slots.get(self.slot) {
            s.calls.fetch_add(self.calls, Ordering::Relaxed);
            s.ticks.fetch_add(self.ticks, Ordering::Relaxed);
            if self.failed > 0 {
                s.failed.fetch_add(self.failed, Ordering::Relaxed);
            }
        }
        self.calls = 0;
        self.ticks = 0;
        self.failed = 0;
    }
}

/// Counts a failed call of the command in `slot` already counted (a parked
/// command whose wait ended in an error).
pub fn record_failed(slot: usize) {
    if let Some(s) = table().slots.get(slot) {
        s.failed.fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts a call of the command in `slot` refused before it ran.
pub fn record_rejected(slot: usize) {
    if let Some(s) = table().slots.get(slot) {
        s.rejected.fetch_add(1, Ordering::Relaxed);
    }
}

/// CONFIG RESETSTAT.
pub fn reset() {
    for s in &table().slots {
        s.reset();
    }
    TOTAL_ERRORS.store(0, Ordering::Relaxed);
    ERRORS.lock().clear();
}

// --- INFO ------------------------------------------------------------------

/// The `commandstats` section's lines.
pub fn commandstats(out: &mut String) {
    for s in &table().slots {
        let calls = s.calls.load(Ordering::Relaxed);
        let rejected = s.rejected.load(Ordering::Relaxed);
        let failed = s.failed.load(Ordering::Relaxed);
        if calls == 0 && rejected == 0 && failed == 0 {
            continue;
        }
        let usec = ticks_to_us(s.ticks.load(Ordering::Relaxed));
        let per = if calls > 0 {
            usec as f64 / calls as f64
        } else {
            0.0
        };
        let _ = write!(
            out,
            "cmdstat_{}:calls={calls},usec={usec},usec_per_call={per:.2},rejected_calls={rejected},failed_calls={failed}\r\n",
            s.name
        );
    }
}

/// The `errorstats` section's lines.
pub fn errorstats(out: &mut String) {
    for (code, n) in ERRORS.lock().iter() {
        let _ = write!(out, "errorstat_{code}:count={n}\r\n");
    }
}

/// The `latencystats` section's lines.
pub fn latencystats(out: &mut String) {
    if !TRACKING.load(Ordering::Relaxed) {
        // With latency-tracking off Redis reports no percentiles at all.
        return;
    }
    let list = PERCENTILES
        .read()
        .ok()
        .and_then(|p| p.clone())
        .unwrap_or_else(|| vec![50.0, 99.0, 99.9]);
    for s in &table().slots {
        let Some(h) = s.hist.get() else { continue };
        let counts: Vec<u64> = h.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            continue;
        }
        let _ = write!(out, "latency_percentiles_usec_{}:", s.name);
        for (i, p) in list.iter().enumerate() {
            let v = ticks_as_us(value_at(&counts, total, *p));
            let sep = if i + 1 < list.len() { "," } else { "" };
            let _ = write!(out, "p{}={v:.3}{sep}", fmt_percentile(*p));
        }
        out.push_str("\r\n");
    }
}

/// LATENCY HISTOGRAM [command ...]: for each command (all with any calls
/// recorded, when none is named; a container's name stands for its
/// subcommands; unknown names are skipped), its calls and the cumulative
/// count of calls per power-of-two bucket of microseconds, from 1024 ns up,
/// listed where the count grows, as Redis reports them.
pub fn latency_histogram(names: &[&[u8]]) -> Reply {
    let t = table();
    let mut picked: Vec<usize> = Vec::new();
    if names.is_empty() {
        picked.extend(0..t.slots.len());
    } else {
        for n in names {
            let name = String::from_utf8_lossy(n).to_ascii_lowercase();
            if let Some(&i) = t.subs.get(&name) {
                picked.push(i);
                continue;
            }
            let Some(spec) = ebb_core::lookup(name.as_bytes()) else {
                continue;
            };
            let i = ebb_core::table::index_of(spec);
            picked.push(i);
            if t.container.get(i).copied().unwrap_or(false) {
                let prefix = format!("{}|", spec.name);
                picked.extend(
                    t.slots
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| s.name.starts_with(&prefix))
                        .map(|(j, _)| j),
                );
            }
        }
    }
    let mut out = Vec::new();
    for i in picked {
        let Some(h) = t.slots[i].hist.get() else {
            continue;
        };
        let counts: Vec<u64> = h.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            continue;
        }
        // Calls per power-of-two bucket of nanoseconds, 1024 ns first.
        let mut per = [0u64; 64];
        for (b, &n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
            let ns = (ticks_as_us(bucket_top(b)) * 1000.0) as u64;
            let k = if ns <= 1024 {
                0
            } else {
                (64 - ((ns - 1) >> 10).leading_zeros()) as usize
            };
            per[k.min(63)] += n;
        }
        let mut cdf = Vec::new();
        let mut seen = 0;
        for (k, &n) in per.iter().enumerate() {
            if n == 0 {
                continue;
            }
            seen += n;
            let label = (1024u64 << k) / 1000;
            cdf.push((Reply::Int(label as i64), Reply::Int(seen as i64)));
        }
        out.push((
            Reply::Bulk(Bytes::from(t.slots[i].name.clone())),
            Reply::Map(vec![
                (Reply::text("calls"), Reply::Int(total as i64)),
                (Reply::text("histogram_usec"), Reply::Map(cdf)),
            ]),
        ));
    }
    Reply::Map(out)
}

/// The value (in ticks) at percentile `p` of a histogram.
fn value_at(counts: &[u64], total: u64, p: f64) -> u64 {
    let want = ((p / 100.0) * total as f64 + 0.5).max(1.0) as u64;
    let want = want.min(total);
    let mut seen = 0;
    for (b, &n) in counts.iter().enumerate() {
        seen += n;
        if seen >= want && n > 0 {
            return bucket_top(b);
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_in_order_within_three_percent() {
        let mut prev = 0;
        for v in (0..5000u64).chain([1 << 20, 123_456_789, u64::MAX / 3, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b < BUCKETS);
            assert!(b >= prev || v >= 5000);
            prev = b;
            let top = bucket_top(b);
            assert!(top >= v, "{v} above its bucket's top {top}");
            assert!((top - v) as f64 <= v as f64 / 32.0 + 1.0, "{v}: {top}");
        }
    }

    #[test]
    fn percentiles_pick_the_ranked_value() {
        let mut counts = vec![0u64; BUCKETS];
        for v in 1..=100u64 {
            counts[bucket_of(v * 1000)] += 1;
        }
        let at = |p| value_at(&counts, 100, p);
        assert!((49_000..=51_600).contains(&at(50.0)));
        assert!(at(100.0) >= 100_000 && at(100.0) < 103_200);
        assert!(at(0.0) >= 1000 && at(0.0) < 1032);
    }

    #[test]
    fn percentile_lists_parse_and_print_as_redis_does() {
        assert_eq!(
            parse_percentiles("0.0 50.0 100.0"),
            Some(vec![0.0, 50.0, 100.0])
        );
        assert_eq!(canonical_percentiles(&[0.0, 50.0, 100.0]), "0 50 100");
        assert_eq!(canonical_percentiles(&[50.0, 99.0, 99.9]), "50 99 99.9");
        assert_eq!(parse_percentiles("10 50 a"), None);
        assert_eq!(parse_percentiles("101"), None);
        assert_eq!(parse_percentiles(""), Some(vec![]));
    }

    #[test]
    fn error_codes_are_the_first_word() {
        reset();
        record_error("WRONGTYPE Operation against a key holding the wrong kind of value");
        record_error("ERR unknown command");
        record_error("ERR x");
        record_error("no-space-in-the-first-thirty-two-bytes-of-this-error");
        let mut s = String::new();
        errorstats(&mut s);
        assert_eq!(
            s,
            "errorstat_ERR:count=3\r\nerrorstat_WRONGTYPE:count=1\r\n"
        );
        assert_eq!(total_errors(), 4);
        reset();
    }
}
