//! Snapshots in ebb's own versioned format: a magic line, RESP commands
//! that rebuild every database (absolute deadlines), and a trailer with the
//! byte length and a checksum, so a torn or altered file is detected.

use ebb_core::dump::checksum;
use ebb_core::Store;

/// First line of every snapshot; the digit is the format version.
pub const MAGIC: &[u8] = b"EBB-SNAPSHOT 1\n";

/// Encodes the store as a snapshot: Redis's RDB format (which Redis 7
/// loads too, member deadlines aside), see [`ebb_core::rdb::snapshot`].
pub fn encode(store: &Store, now: u64) -> Vec<u8> {
    ebb_core::rdb::snapshot(store, now)
}

/// Checks a snapshot of either format without loading it (DEBUG RELOAD
/// checks before it empties the dataset).
pub fn check(data: &[u8], databases: usize) -> Result<(), String> {
    if ebb_core::rdb::is_file(data) {
        ebb_core::rdb::file_commands(data, databases, &mut |_| {}).map(|_| ())
    } else {
        decode_own(data).map(|_| ())
    }
}

/// Loads a snapshot into `store`: an RDB file (ebb's, or Redis's) as it
/// decodes, or one of ebb's earlier format; returns the commands applied.
/// Err is the reason to log.
pub fn load(store: &mut Store, data: &[u8], now: u64) -> Result<usize, String> {
    if ebb_core::rdb::is_file(data) {
        let (loaded, commands) = super::load_rdb(store, data, now)?;
        log_redis_file(&loaded);
        return Ok(commands);
    }
    let body = decode_own(data)?;
    super::replay(store, body, now)
        .map(|r| r.commands)
        .map_err(|e| match e {
            super::LoadError::Corrupt(off, why) => format!("at offset {off}: {why}"),
            super::LoadError::UnknownCommand(c) => format!("unknown command '{c}'"),
        })
}

/// Logs what a Redis RDB file held, as it is loaded.
fn log_redis_file(loaded: &ebb_core::rdb::Loaded) {
    tracing::info!(
        "Loaded an RDB file (format version {}): {} keys, {} function libraries",
        loaded.version,
        loaded.keys,
        loaded.libraries
    );
    for k in &loaded.empty_names {
        tracing::info!(
            "rdbLoadObject skipping empty key: {}",
            String::from_utf8_lossy(k)
        );
    }
    if loaded.empty > 0 {
        tracing::info!("empty keys skipped: {}", loaded.empty);
    }
}

/// The command stream of a snapshot of ebb's earlier format, if its
/// magic, length and checksum hold.
fn decode_own(data: &[u8]) -> Result<&[u8], String> {
    let rest = data
        .strip_prefix(MAGIC)
        .ok_or("not an ebb snapshot (bad magic or unsupported version)")?;
    let end = rest
        .iter()
        .rposition(|&c| c == b'E')
        .ok_or("snapshot has no trailer")?;
    let (body, trailer) = rest.split_at(end);
    let t = std::str::from_utf8(trailer).map_err(|_| "bad trailer")?;
    let mut parts = t.trim_end().split(' ');
    let (Some("END"), Some(len), Some(sum)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("snapshot trailer is damaged".into());
    };
    if len.parse::<usize>().ok() != Some(body.len()) {
        return Err("snapshot length does not match its trailer (truncated?)".into());
    }
    if u64::from_str_radix(sum, 16).ok() != Some(checksum(body)) {
        return Err("snapshot checksum mismatch".into());
    }
    Ok(body)
}

/// The file a snapshot is written to by process `pid` before it is renamed
/// into place: `temp-<pid>.rdb` beside it, Redis's name.
pub fn temp_path(path: &std::path::Path, pid: u32) -> std::path::PathBuf {
    path.with_file_name(format!("temp-{pid}.rdb"))
}

/// Writes a snapshot atomically (temp file, fsync, rename).
pub fn write_file(path: &std::path::Path, data: &[u8]) -> std::io::Result<()> {
    write_file_after(path, data, std::time::Duration::ZERO)
}

/// [`write_file`], the temp file created `delay` before the data goes in
/// (a background save held by `rdb-key-save-delay` shows its temp file
/// while it runs, as Redis's does).
pub fn write_file_after(
    path: &std::path::Path,
    data: &[u8],
    delay: std::time::Duration,
) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = temp_path(path, std::process::id());
    let mut f = std::fs::File::create(&tmp)?;
    std::thread::sleep(delay);
    let written = f
        .write_all(data)
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        // As Redis: a failed save leaves no partial file taking the
        // room the next one needs.
        drop(f);
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_core::testing::Harness;

    #[test]
    fn round_trip_and_damage() {
        let mut h = Harness::new();
        h.run(&["SET", "a", "1"]);
        let data = encode(&h.store, h.now);
        assert!(check(&data, 16).is_ok());
        let mut bad = data.clone();
        let i = MAGIC.len() + 5;
        bad[i] ^= 1;
        assert!(check(&bad, 16).is_err());
        assert!(check(&data[..data.len() - 4], 16).is_err());
    }
}
