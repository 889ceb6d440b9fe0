//! Configuration as redis-server takes it: a config file of `name value…`
//! lines, `--name value…` command-line options, CONFIG GET/SET. Options ebb
//! has no use for are accepted, reported back and logged once as inert.

use std::collections::BTreeMap;

use ebb_core::glob::glob_match;

mod checks;
mod options;
mod rewrite;
pub use checks::parse_memory;
use checks::{canonical, int_range, save_rules, twin};
pub use options::option_name;
use options::{find, Kind, ALIASES, OPTIONS};
use rewrite::repr_word;

/// The whole configuration: every option's current value as text.
#[derive(Debug, Clone)]
pub struct Config {
    values: BTreeMap<String, String>,
    /// The config file it was loaded from, for CONFIG REWRITE.
    pub file: Option<String>,
    /// `rename-command old new` lines, in order.
    pub renames: Vec<(String, String)>,
    /// `user name rules…` lines, in order.
    pub users: Vec<Vec<String>>,
    /// `loadmodule` lines (modules ebb-server does not load: warned at start).
    pub modules: Vec<String>,
    /// Files being read through `include` (to refuse a loop).
    including: Vec<String>,
    /// A `save` line was read (file, include or command line): the first
    /// replaces the default rules, later ones add to them, as in Redis.
    save_seen: bool,
}

impl Default for Config {
    fn default() -> Self {
        let mut values = BTreeMap::new();
        for opt in OPTIONS {
            values.insert(opt.name.to_string(), opt.default.to_string());
        }
        if let Ok(d) = std::env::current_dir() {
            values.insert("dir".into(), d.display().to_string());
        }
        Config {
            values,
            file: None,
            renames: Vec::new(),
            users: Vec::new(),
            modules: Vec::new(),
            including: Vec::new(),
            save_seen: false,
        }
    }
}

impl Config {
    /// Builds the configuration from `ebb-server [config-file] [--name value…]`.
    pub fn from_args(args: &[String]) -> Result<Config, String> {
        let mut cfg = Config::default();
        let mut rest = args;
        if let Some(first) = args.first() {
            if !first.starts_with("--") {
                let text = std::fs::read_to_string(first)
                    .map_err(|e| format!("Fatal error, can't open config file '{first}': {e}"))?;
                cfg.load_text(&text)?;
                cfg.file = Some(first.clone());
                rest = &args[1..];
            }
        }
        // As redis-server reads its command line: `--name` starts a line,
        // the argument right after a bare name is its value even when it
        // starts with `--`, further plain arguments add to the line, and
        // `--name value` in one argument is a whole line. The lines are
        // read after the file, as if appended to it.
        let mut lines: Vec<String> = Vec::new();
        let mut want_value = false;
        for (i, arg) in rest.iter().enumerate() {
            if let Some(body) = arg.strip_prefix("--").filter(|_| !want_value) {
                let words = crate::resp::split_args(body.as_bytes()).map_or(1, |w| w.len());
                let mut line = body.to_string();
                want_value = words <= 1;
                // `--save` with nothing after it (or another option
                // next) means `save ""`, as in Redis.
                let next_is_option = rest.get(i + 1).is_none_or(|n| n.starts_with("--"));
                if want_value && next_is_option && body.eq_ignore_ascii_case("save") {
                    line.push_str(" \"\"");
                    want_value = false;
                }
                lines.push(line);
            } else {
                // Values are quoted as Redis quotes them (errors then show
                // `'port "6379" "6380"'`). Words before any `--name` make a
                // line of their own, which Redis also accepts
                // (`loglevel verbose`).
                match lines.last_mut() {
                    Some(line) => {
                        line.push(' ');
                        line.push_str(&repr_word(arg));
                    }
                    None => lines.push(repr_word(arg)),
                }
                want_value = false;
            }
        }
        cfg.load_text(&lines.join("\n"))?;
        Ok(cfg)
    }

    /// Loads config-file text.
    pub fn load_text(&mut self, text: &str) -> Result<(), String> {
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = split_config_line(line)
                .ok_or_else(|| format!("Unbalanced quotes in configuration line {}", n + 1))?;
            let Some((name, args)) = words.split_first() else {
                continue;
            };
            let name = name.to_ascii_lowercase();
            let fatal = |e: String| {
                format!(
                    "*** FATAL CONFIG FILE ERROR *** line {}: >>> '{}' {}",
                    n + 1,
                    line,
                    e
                )
            };
            // An option takes at least one argument, except those made of
            // several words (`save`, `bind`, …).
            let known = find(canonical(&name));
            if args.is_empty() && known.is_some_and(|o| o.kind != Kind::Words) {
                return Err(fatal("wrong number of arguments".into()));
            }
            // A number, a yes/no or a choice is one argument.
            let single = known.is_some_and(|o| {
                matches!(
                    o.kind,
                    Kind::Int | Kind::Memory | Kind::Bool | Kind::Enum(_)
                )
            });
            if args.len() > 1 && single {
                return Err(fatal("wrong number of arguments".into()));
            }
            if name == "include" {
                let [path] = args else {
                    return Err(fatal("wrong number of arguments".into()));
                };
                if self.including.contains(path) || self.including.len() > 16 {
                    return Err(fatal("include loop".into()));
                }
                let text = std::fs::read_to_string(path)
                    .map_err(|e| fatal(format!("can't open included file: {e}")))?;
                self.including.push(path.clone());
                let r = self.load_text(&text);
                self.including.pop();
                r?;
                continue;
            }
            if name == "rename-command" {
                let [old, new] = args else {
                    return Err(fatal("wrong number of arguments".into()));
                };
                self.renames.push((old.clone(), new.clone()));
                continue;
            }
            if name == "user" {
                if args.is_empty() {
                    return Err(fatal("wrong number of arguments".into()));
                }
                if self.users.iter().any(|u| u[0] == args[0]) {
                    return Err(fatal(format!(
                        "Error in user declaration '{}': Duplicate user found. A user can only \
                         be defined once in config files",
                        args[0]
                    )));
                }
                self.users.push(args.to_vec());
                continue;
            }
            if name == "loadmodule" {
                self.modules.push(args.join(" "));
                continue;
            }
            let value = args.join(" ");
            if name == "save" {
                // Several `save` lines accumulate, as in Redis.
                let cur = if self.save_seen {
                    self.get("save").unwrap_or_default()
                } else {
                    String::new()
                };
                self.save_seen = true;
                let value = save_rules(&value).map_err(|e| {
                    format!(
                        "*** FATAL CONFIG FILE ERROR *** line {}: >>> '{}' {}",
                        n + 1,
                        line,
                        e
                    )
                })?;
                let v = if value.is_empty() || cur.is_empty() {
                    value
                } else {
                    format!("{cur} {value}")
                };
                self.values.insert("save".into(), v);
                continue;
            }
            self.set(&name, &value).map_err(|e| {
                format!(
                    "*** FATAL CONFIG FILE ERROR *** line {}: >>> '{}' {}",
                    n + 1,
                    line,
                    e
                )
            })?;
        }
        Ok(())
    }

    /// The value of an option.
    pub fn get(&self, name: &str) -> Option<String> {
        self.values
            .get(canonical(&name.to_ascii_lowercase()))
            .cloned()
    }

    /// A file option's path: relative paths are inside `dir`, where Redis
    /// (which changes into `dir`) looks for them. Empty when unset.
    pub fn path_in_dir(&self, name: &str) -> String {
        let path = self.get(name).unwrap_or_default();
        if path.is_empty() || std::path::Path::new(&path).is_absolute() {
            return path;
        }
        let dir = self.get("dir").unwrap_or_default();
        if dir.is_empty() {
            return path;
        }
        std::path::Path::new(&dir)
            .join(path)
            .to_string_lossy()
            .into_owned()
    }

    /// The value of a numeric option.
    pub fn get_i64(&self, name: &str) -> i64 {
        self.get(name).and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    /// Whether a yes/no option is yes.
    pub fn get_bool(&self, name: &str) -> bool {
        self.get(name).as_deref() == Some("yes")
    }

    /// Sets an option after checking its value; errors name the problem.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let lname = name.to_ascii_lowercase();
        let cname = canonical(&lname);
        let Some(opt) = find(cname) else {
            return Err("Bad directive or wrong number of arguments".into());
        };
        // Redis reads numbers strictly (no spaces, sign `+` or leading
        // zeros), integers whole and memory values as C strings (up to a
        // NUL).
        let v = match opt.kind {
            Kind::Int => {
                let n: i64 = ebb_core::args::parse_i64(value.as_bytes())
                    .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
                if let Some((lo, hi)) = int_range(cname) {
                    if !(lo..=hi).contains(&n) {
                        return Err(format!("argument must be between {lo} and {hi} inclusive"));
                    }
                }
                // Redis keeps `hz` within 1..500 whatever it is given.
                let n = if cname == "hz" { n.clamp(1, 500) } else { n };
                n.to_string()
            }
            Kind::Memory
                if cname == "maxmemory-clients" && value.len() > 1 && value.ends_with('%') =>
            {
                // A share of maxmemory, as Redis takes it.
                let pct: i64 = ebb_core::args::parse_i64(&value.as_bytes()[..value.len() - 1])
                    .ok_or_else(|| "argument must be a memory or percent value".to_string())?;
                if pct > 100 {
                    return Err("percentage argument must be less or equal to 100".into());
                }
                if pct < 0 {
                    return Err("argument must be a memory or percent value".into());
                }
                format!("{pct}%")
            }
            Kind::Memory => {
                let n = parse_memory(value.split('\0').next().unwrap_or_default()).ok_or_else(
                    || {
                        if cname == "maxmemory-clients" {
                            "argument must be a memory or percent value".to_string()
                        } else {
                            "argument must be a memory value".to_string()
                        }
                    },
                )?;
                if let Some((lo, hi)) = checks::memory_range(cname) {
                    if !(lo..=hi).contains(&n) {
                        return Err(format!("argument must be between {lo} and {hi} inclusive"));
                    }
                }
                // Redis's replication backlog is never under 16 kB.
                let n = if cname == "repl-backlog-size" {
                    n.max(16 * 1024)
                } else {
                    n
                };
                n.to_string()
            }
            Kind::Bool => match value.trim().to_ascii_lowercase().as_str() {
                "yes" => "yes".into(),
                "no" => "no".into(),
                _ => return Err("argument must be 'yes' or 'no'".into()),
            },
            Kind::Enum(choices) => {
                let l = value.trim().to_ascii_lowercase();
                if !choices.contains(&l.as_str()) {
                    return Err("argument(s) must be one of the following: ".to_string()
                        + &choices.join(", "));
                }
                // `relative` is another name of `yes`, shown as `yes`.
                if cname == "oom-score-adj" && l == "relative" {
                    "yes".to_string()
                } else {
                    l
                }
            }
            Kind::Words if cname == "save" => save_rules(value)?,
            Kind::Words if cname == "oom-score-adj-values" => checks::oom_score_adj_values(value)?,
            Kind::Str | Kind::Words => value.to_string(),
        };
        let v = if cname == "latency-tracking-info-percentiles" {
            match crate::cmdstats::parse_percentiles(&v) {
                Some(list) => crate::cmdstats::canonical_percentiles(&list),
                None if v
                    .split_whitespace()
                    .all(|w| w.parse::<f64>().is_ok_and(|p| p.is_finite())) =>
                {
                    return Err(
                        "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                            .into(),
                    )
                }
                None => return Err("Invalid latency-tracking-info-percentiles parameters".into()),
            }
        } else {
            v
        };
        checks::aof_names(cname, &v)?;
        if cname == "proc-title-template" && !crate::proctitle::valid_template(&v) {
            return Err("template format is invalid or contains unknown variables".into());
        }
        if cname == "replicaof" && !v.is_empty() && !v.eq_ignore_ascii_case("no one") {
            let words: Vec<&str> = v.split_ascii_whitespace().collect();
            if words.len() != 2 {
                return Err("wrong number of arguments".into());
            }
            if words[1].parse::<u16>().is_err() {
                return Err("Invalid master port".into());
            }
        }
        let v = if matches!(cname, "shutdown-on-sigint" | "shutdown-on-sigterm") {
            // Redis's flags: `default`, or some of save/nosave/now/force,
            // shown in that order.
            const FLAGS: [&str; 5] = ["default", "save", "nosave", "now", "force"];
            let words: Vec<String> = v
                .split_ascii_whitespace()
                .map(|w| w.to_ascii_lowercase())
                .collect();
            if words.is_empty() || words.iter().any(|w| !FLAGS.contains(&w.as_str())) {
                return Err(
                    "argument(s) must be one of the following: default, save, nosave, now, force"
                        .into(),
                );
            }
            FLAGS
                .iter()
                .filter(|f| words.iter().any(|w| w == *f))
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            v
        };
        let v = if cname == "client-output-buffer-limit" {
            let current = self
                .values
                .get(cname)
                .cloned()
                .unwrap_or_else(|| opt.default.to_string());
            crate::outbuf::merge_limits(&current, &v)?
        } else {
            v
        };
        if cname == "notify-keyspace-events" && crate::notify::parse_flags(&v).is_none() {
            return Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into());
        }
        if !opt.effective && v != opt.default && !v.is_empty() {
            tracing::info!(option = cname, value = %v, "option accepted but has no effect in ebb");
        }
        // Keep the old and new encoding-threshold names in step.
        if let Some(other) = twin(cname) {
            self.values.insert(other.to_string(), v.clone());
        }
        self.values.insert(cname.to_string(), v);
        Ok(())
    }

    /// CONFIG GET: every (name, value) whose name matches a pattern.
    pub fn matching(&self, pattern: &[u8]) -> Vec<(String, String)> {
        let lower = pattern.to_ascii_lowercase();
        let exact = std::str::from_utf8(&lower)
            .ok()
            .map(canonical)
            .and_then(find);
        if let Some(opt) = exact {
            // A name (not a pattern) is answered under the name as asked,
            // old names and letter case included, as Redis does.
            return vec![(
                String::from_utf8_lossy(pattern).into_owned(),
                self.values.get(opt.name).cloned().unwrap_or_default(),
            )];
        }
        // A pattern matches the old names too (`*of` gives slaveof and
        // replicaof), as in Redis.
        let mut out: Vec<(String, String)> = self
            .values
            .iter()
            .filter(|(k, _)| !find(k).is_some_and(|o| o.hidden))
            .filter(|(k, _)| glob_match(&lower, k.as_bytes(), true))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for alias in ALIASES {
            if glob_match(&lower, alias.as_bytes(), true) {
                let v = self
                    .values
                    .get(canonical(alias))
                    .cloned()
                    .unwrap_or_default();
                out.push((alias.to_string(), v));
            }
        }
        out
    }
}

fn split_config_line(line: &str) -> Option<Vec<String>> {
    let args = crate::resp::split_args(line.as_bytes())?;
    Some(
        args.iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

#[cfg(test)]
mod tests;
