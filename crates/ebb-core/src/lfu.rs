//! Keys' access stamps ([`crate::db::Entry::last_access`]): the time of the
//! last access, or under an `-lfu` eviction policy Redis's logarithmic
//! access counter with the minute it was last decayed.

/// How access stamps are kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lfu {
    /// An `-lfu` policy is selected.
    pub on: bool,
    /// `lfu-log-factor`.
    pub log_factor: u32,
    /// `lfu-decay-time`, in minutes (0: never decays).
    pub decay_minutes: u64,
}

/// A new key's counter (Redis's `LFU_INIT_VAL`).
pub const LFU_INIT: u8 = 5;
/// Marks a stamp as an LFU one (time stamps never reach this bit).
const LFU_MARK: u64 = 1 << 62;

impl Lfu {
    /// The stamp after an access at `now`: the time (LRU), or the counter
    /// decayed, then raised with a probability that falls as it grows.
    pub fn stamp(&self, old: u64, now: u64) -> u64 {
        if !self.on {
            return now;
        }
        let mut c = self.counter(old, now);
        if c < 255 {
            let base = c.saturating_sub(LFU_INIT) as f64;
            let p = 1.0 / (base * self.log_factor as f64 + 1.0);
            if rand::random::<f64>() < p {
                c += 1;
            }
        }
        Self::pack(now, c)
    }

    /// The stamp of a key created at `now`: the time, or under an `-lfu`
    /// policy a new key's counter.
    pub fn fresh(&self, now: u64) -> u64 {
        if self.on {
            Self::pack(now, LFU_INIT)
        } else {
            now
        }
    }

    /// A stamp holding counter `c` as of `now`.
    pub fn pack(now: u64, c: u8) -> u64 {
        LFU_MARK | (((now / 60_000) & 0xffff) << 8) | c as u64
    }

    /// The counter a stamp holds at `now`, after decay: one step per
    /// `lfu-decay-time` minutes since it was last decayed. A stamp from
    /// before the policy (or none) reads as a new key's counter.
    pub fn counter(&self, stamp: u64, now: u64) -> u8 {
        if stamp & LFU_MARK == 0 {
            return LFU_INIT;
        }
        let then = (stamp >> 8) & 0xffff;
        let c = (stamp & 0xff) as u8;
        let now_min = (now / 60_000) & 0xffff;
        let elapsed = if now_min >= then {
            now_min - then
        } else {
            65_535 - then + now_min
        };
        let periods = elapsed.checked_div(self.decay_minutes).unwrap_or(0);
        c.saturating_sub(periods.min(255) as u8)
    }
}
