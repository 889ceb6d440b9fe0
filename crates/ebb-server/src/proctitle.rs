//! The process title, as Redis sets it: `ps` and `/proc/<pid>/cmdline`
//! show `proc-title-template` expanded (by default `{title}
//! {listen-addr} {server-mode}`, e.g. `ebb-server 127.0.0.1:6379`), and
//! background children show their job. `set-proc-title no` leaves the
//! command line as it was.
//!
//! Linux reads a process's command line from the memory that held its
//! arguments at start, followed by its environment. At start the
//! environment is copied elsewhere (each variable set again, so the C
//! library keeps its own copies), and the title is then written over
//! both areas.

use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::config::Config;

/// The area the title is written in: start and length (0: no title).
static AREA_START: AtomicUsize = AtomicUsize::new(0);
static AREA_LEN: AtomicUsize = AtomicUsize::new(0);

/// The program name as started (`{title}`), and the config file's path.
static START: Mutex<(String, String)> = Mutex::new((String::new(), String::new()));

/// Finds the argument and environment areas and frees the environment
/// area for the title. Call first thing in `main`, before any thread
/// exists (the environment is rewritten).
pub fn init() {
    let argv0 = std::env::args()
        .next()
        .unwrap_or_else(|| "ebb-server".into());
    START.lock().0 = argv0;
    #[cfg(target_os = "linux")]
    if let Some((start, end)) = linux::free_area() {
        AREA_START.store(start, Ordering::Relaxed);
        AREA_LEN.store(end - start, Ordering::Relaxed);
    }
}

/// Records the configuration file's path (`{config-file}`), absolute.
pub fn set_config_file(path: Option<&str>) {
    let shown = match path {
        Some(p) => std::fs::canonicalize(p)
            .map(|a| a.display().to_string())
            .unwrap_or_else(|_| p.to_string()),
        None => "-".to_string(),
    };
    START.lock().1 = shown;
}

/// `template` expanded for the process called `title`: `{title}`,
/// `{listen-addr}`, `{server-mode}`, `{config-file}`, `{port}`,
/// `{tls-port}`, `{unixsocket}`, `{{` for a brace; None for an unknown
/// name or an unfinished `{`. Spaces at both ends are trimmed.
pub fn expand(template: &str, title: &str, cfg: &Config) -> Option<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if after.is_empty() {
            return None;
        }
        if let Some(r) = after.strip_prefix('{') {
            out.push('{');
            rest = r;
            continue;
        }
        let close = after.find('}')?;
        out.push_str(&variable(&after[..close], title, cfg)?);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Some(out.trim_matches(' ').to_string())
}

fn variable(name: &str, title: &str, cfg: &Config) -> Option<String> {
    let port = cfg.get_i64("port");
    Some(match name {
        "title" => title.to_string(),
        "listen-addr" => {
            if port != 0 {
                let binds = crate::listen::binds_of(cfg);
                let first = binds
                    .first()
                    .map(|b| b.trim_start_matches('-'))
                    .unwrap_or("*");
                format!("{first}:{port}")
            } else {
                format!("unixsocket:{}", cfg.get("unixsocket").unwrap_or_default())
            }
        }
        "server-mode" => String::new(),
        "config-file" => START.lock().1.clone(),
        "port" => port.to_string(),
        "tls-port" => "0".to_string(),
        "unixsocket" => cfg.get("unixsocket").unwrap_or_default(),
        _ => return None,
    })
}

/// Whether `template` may be set (Redis's check: it expands, to
/// something).
pub fn valid_template(template: &str) -> bool {
    expand(template, "", &Config::default()).is_some_and(|t| !t.is_empty())
}

/// The title for the configuration: `job` for a background child, else
/// the program name; None with `set-proc-title no`.
pub fn title_for(cfg: &Config, job: Option<&str>) -> Option<String> {
    if !cfg.get_bool("set-proc-title") {
        return None;
    }
    let name = match job {
        Some(t) => t.to_string(),
        None => START.lock().0.clone(),
    };
    expand(
        &cfg.get("proc-title-template").unwrap_or_default(),
        &name,
        cfg,
    )
}

/// Sets the server's title from the configuration.
pub fn update(cfg: &Config) {
    if let Some(text) = title_for(cfg, None) {
        write(&text);
    }
}

/// Writes `text` as the command line, cut to the room there is. Takes no
/// lock (a forked child calls it).
pub fn write(text: &str) {
    let (start, len) = (
        AREA_START.load(Ordering::Relaxed),
        AREA_LEN.load(Ordering::Relaxed),
    );
    if start == 0 || len < 2 {
        return;
    }
    let bytes = text.as_bytes();
    let n = bytes.len().min(len - 1);
    // SAFETY: [start, start + len) is the process's own argument and
    // environment memory (read from /proc/self/stat by `init`), which
    // nothing refers to any more once `init` moved the environment away;
    // it lives as long as the process.
    unsafe {
        let area = std::slice::from_raw_parts_mut(start as *mut u8, len);
        area[..n].copy_from_slice(&bytes[..n]);
        area[n..].fill(0);
    }
}

#[cfg(target_os = "linux")]
mod linux {
    /// The argument area followed by the environment area, when they are
    /// contiguous and the environment could be moved away; else the
    /// argument area alone.
    pub fn free_area() -> Option<(usize, usize)> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // Fields after the command name (which may hold spaces), from
        // field 3 on; arg_start..env_end are fields 48 to 51.
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<usize> = rest
            .split_whitespace()
            .skip(45)
            .take(4)
            .map(|f| f.parse().ok())
            .collect::<Option<Vec<_>>>()?;
        let [arg_start, arg_end, env_start, env_end] = fields[..] else {
            return None;
        };
        if arg_start == 0 || arg_end <= arg_start {
            return None;
        }
        if env_start != arg_end || env_end <= env_start || !move_environment() {
            return Some((arg_start, arg_end));
        }
        Some((arg_start, env_end))
    }

    /// Sets every variable again, so that the C library holds copies of
    /// its own and no longer points into the environment area.
    fn move_environment() -> bool {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        for (k, v) in std::env::vars_os() {
            let (Ok(k), Ok(v)) = (CString::new(k.as_bytes()), CString::new(v.as_bytes())) else {
                return false;
            };
            // SAFETY: called before any thread exists (see `init`), with
            // valid C strings.
            if unsafe { libc::setenv(k.as_ptr(), v.as_ptr(), 1) } != 0 {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_as_in_redis() {
        let mut cfg = Config::default();
        let _ = cfg.set("port", "7000");
        let _ = cfg.set("bind", "-::1 127.0.0.1");
        assert_eq!(
            expand("{title} {listen-addr} {server-mode}", "ebb-server", &cfg).as_deref(),
            Some("ebb-server ::1:7000")
        );
        assert_eq!(
            expand("x {{ {port} {tls-port}", "t", &cfg).as_deref(),
            Some("x { 7000 0")
        );
        assert_eq!(expand("{invalid-var}", "t", &cfg), None);
        assert_eq!(expand("{title", "t", &cfg), None);
        assert_eq!(expand("abc {", "t", &cfg), None);
        assert!(valid_template(
            "TEST {title} {listen-addr} {port} {tls-port} {unixsocket} {config-file}"
        ));
        assert!(!valid_template("{invalid-var}"));
        assert!(!valid_template("{title}"));
        assert!(!valid_template("   "));
        let _ = cfg.set("port", "0");
        let _ = cfg.set("unixsocket", "/tmp/s.sock");
        assert_eq!(
            expand("{listen-addr}", "t", &cfg).as_deref(),
            Some("unixsocket:/tmp/s.sock")
        );
    }
}
