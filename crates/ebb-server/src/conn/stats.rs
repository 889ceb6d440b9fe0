//! A session's counters, published to the server once per batch of
//! requests (one atomic update per counter and batch, not per command).

use std::sync::atomic::Ordering;

use super::dispatch::CLOCK_REUSE_US;
use super::Session;
use crate::server::now_ms;

impl Session {
    /// Starts a batch of requests: its first command reads the duration
    /// counter and the clock afresh. A clock reading is reused only within
    /// a batch: a client that read its own clock after the last reply (to
    /// send GETEX … PXAT now+10000, say) must not meet a server clock
    /// older than that reply, or PTTL would answer one millisecond more
    /// than it gave.
    pub(super) fn start_batch(&mut self) {
        self.ticks_last = 0;
        self.clock = 0;
    }

    /// Publishes the per-batch statistics (command count, changes, last
    /// command and activity time for CLIENT LIST): once per batch rather
    /// than per command, since shared counters are costly across cores.
    pub fn publish_stats(&mut self) {
        self.close_run();
        self.tally.flush();
        if self.batch_commands > 0 {
            let stats = &self.shared.stats;
            stats
                .commands
                .fetch_add(self.batch_commands, Ordering::Relaxed);
            self.batch_commands = 0;
        }
        if self.batch_dirty > 0 {
            let stats = &self.shared.stats;
            stats.dirty.fetch_add(self.batch_dirty, Ordering::Relaxed);
            self.batch_dirty = 0;
        }
        if self.batch_hits > 0 {
            let n = std::mem::take(&mut self.batch_hits);
            self.shared
                .stats
                .keyspace_hits
                .fetch_add(n, Ordering::Relaxed);
        }
        if self.batch_misses > 0 {
            let n = std::mem::take(&mut self.batch_misses);
            self.shared
                .stats
                .keyspace_misses
                .fetch_add(n, Ordering::Relaxed);
        }
        if let Some(slot) = self.last_cmd.take() {
            // The clock as last read in this batch: close enough for an
            // idle time in seconds.
            let fresh = self.clock > 0
                && crate::cmdstats::ticks().wrapping_sub(self.clock_ticks)
                    < crate::cmdstats::us_to_ticks(CLOCK_REUSE_US);
            let now = if fresh { self.clock } else { now_ms() };
            self.entry.set_last_command(slot, now);
        }
    }
}
