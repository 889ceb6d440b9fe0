//! The ACL LOG: the newest refusals, those alike within 60 s counted
//! together in one entry.

use super::{Acl, Denied};

/// One ACL LOG entry.
#[derive(Clone)]
pub struct LogEntry {
    pub count: u64,
    pub reason: &'static str,
    pub context: &'static str,
    pub object: String,
    pub username: String,
    pub created_ms: u64,
    pub client_info: String,
}

impl Acl {
    /// The newest `count` log entries.
    pub fn log_entries(&self, count: usize) -> Vec<LogEntry> {
        self.log.lock().iter().take(count).cloned().collect()
    }

    /// ACL LOG RESET.
    pub fn reset_log(&self) {
        self.log.lock().clear();
    }

    /// Records a refusal in the ACL log (entries alike within 60 s are
    /// counted together, as in Redis).
    #[allow(clippy::too_many_arguments)]
    pub fn log(
        &self,
        reason: &'static str,
        context: &'static str,
        object: String,
        username: &[u8],
        client_info: String,
        max_len: usize,
        now_ms: u64,
    ) {
        let username = String::from_utf8_lossy(username).into_owned();
        let mut log = self.log.lock();
        let same = log.iter().position(|e| {
            e.reason == reason
                && e.context == context
                && e.object == object
                && e.username == username
                && now_ms.saturating_sub(e.created_ms) < 60_000
        });
        // A repeat counts in the entry, which moves to the front as the
        // newest.
        if let Some(mut e) = same.and_then(|i| log.remove(i)) {
            e.count += 1;
            e.client_info = client_info;
            e.created_ms = now_ms;
            log.push_front(e);
            return;
        }
        log.push_front(LogEntry {
            count: 1,
            reason,
            context,
            object,
            username,
            created_ms: now_ms,
            client_info,
        });
        log.truncate(max_len);
    }
}

/// The ACL LOG reason and object of a refusal.
pub fn log_reason(d: Denied, argv: &[&[u8]], slot_name: &str) -> (&'static str, String) {
    match d {
        Denied::Command => ("command", slot_name.to_string()),
        Denied::Key(i) => (
            "key",
            String::from_utf8_lossy(argv.get(i).map_or(&b""[..], |b| &b[..])).into_owned(),
        ),
        Denied::Channel(i) => (
            "channel",
            String::from_utf8_lossy(argv.get(i).map_or(&b""[..], |b| &b[..])).into_owned(),
        ),
    }
}
