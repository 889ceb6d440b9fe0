//! What COMMAND INFO and COMMAND DOCS report of each module command, and
//! what ACL key permissions and cluster routing read: arity, summary,
//! tips and key specifications (read-only, read-write, overwrite,
//! remove), taken from core's table (`RedisModule_SetCommandInfo`, Redis
//! 7.0's version 1 of the structures).

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use ebb_core::keyspecs::{self, Begin, Find};
use ebb_core::CommandSpec;

use crate::ffi::{api, Ctx};

#[repr(C)]
struct InfoVersion {
    version: c_int,
    sizeof_historyentry: usize,
    sizeof_keyspec: usize,
    sizeof_arg: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct BsIndex {
    pos: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct BsKeyword {
    keyword: *const c_char,
    startfrom: c_int,
}

#[repr(C)]
union BeginSearch {
    index: BsIndex,
    keyword: BsKeyword,
}

/// Both forms of `fk` are three integers: range (lastkey, keystep, limit)
/// and keynum (keynumidx, firstkey, keystep).
#[repr(C)]
#[derive(Clone, Copy)]
struct FindKeys {
    a: c_int,
    b: c_int,
    c: c_int,
}

#[repr(C)]
struct KeySpec {
    notes: *const c_char,
    flags: u64,
    begin_search_type: c_int,
    bs: BeginSearch,
    find_keys_type: c_int,
    fk: FindKeys,
}

#[repr(C)]
struct CommandInfo {
    version: *const InfoVersion,
    summary: *const c_char,
    complexity: *const c_char,
    since: *const c_char,
    history: *mut c_void,
    tips: *const c_char,
    arity: c_int,
    key_specs: *mut KeySpec,
    args: *mut c_void,
}

/// `RedisModuleCommandHistoryEntry` (two pointers) and
/// `RedisModuleCommandArg`, neither of which the module passes.
const SIZEOF_HISTORY_ENTRY: usize = 16;
const SIZEOF_ARG: usize = 64;

static VERSION: InfoVersion = InfoVersion {
    version: 1,
    sizeof_historyentry: SIZEOF_HISTORY_ENTRY,
    sizeof_keyspec: std::mem::size_of::<KeySpec>(),
    sizeof_arg: SIZEOF_ARG,
};

const BS_UNKNOWN: c_int = 1;
const BS_INDEX: c_int = 2;
const FK_UNKNOWN: c_int = 1;
const FK_RANGE: c_int = 2;
const FK_KEYNUM: c_int = 3;

/// `REDISMODULE_CMD_KEY_*` of core's flag words.
pub fn key_flag_bits(words: &[&str]) -> u64 {
    words
        .iter()
        .map(|w| match *w {
            "RO" => 1 << 0,
            "RW" => 1 << 1,
            "OW" => 1 << 2,
            "RM" => 1 << 3,
            "access" => 1 << 4,
            "update" => 1 << 5,
            "insert" => 1 << 6,
            "delete" => 1 << 7,
            "not_key" => 1 << 8,
            "incomplete" => 1 << 9,
            "variable_flags" => 1 << 10,
            _ => 0,
        })
        .fold(0, |a, b| a | b)
}

fn key_spec(s: &keyspecs::KeySpec) -> KeySpec {
    let (begin_search_type, pos) = match s.begin {
        Begin::Index(i) => (BS_INDEX, i as c_int),
        // No module command begins at a keyword (only MIGRATE does).
        Begin::Unknown | Begin::Keyword { .. } => (BS_UNKNOWN, 0),
    };
    let (find_keys_type, fk) = match s.find {
        Find::Range { last, step, limit } => (
            FK_RANGE,
            FindKeys {
                a: last as c_int,
                b: step as c_int,
                c: limit as c_int,
            },
        ),
        Find::KeyNum { index, first, step } => (
            FK_KEYNUM,
            FindKeys {
                a: index as c_int,
                b: first as c_int,
                c: step as c_int,
            },
        ),
        Find::Unknown => (FK_UNKNOWN, FindKeys { a: 0, b: 0, c: 0 }),
    };
    KeySpec {
        notes: std::ptr::null(),
        flags: key_flag_bits(&s.flags),
        begin_search_type,
        bs: BeginSearch {
            index: BsIndex { pos },
        },
        find_keys_type,
        fk,
    }
}

/// Describes the module command `name` (registered already) as core
/// describes `spec`. The server copies everything it is given.
///
/// # Safety
/// `ctx` must be the module's load context.
pub unsafe fn describe(ctx: *mut Ctx, name: &CStr, spec: &CommandSpec) -> bool {
    let a = api();
    let cmd = (a.GetCommand)(ctx, name.as_ptr());
    if cmd.is_null() {
        return false;
    }
    let mut specs: Vec<KeySpec> = keyspecs::key_specs(spec.name)
        .iter()
        .map(key_spec)
        .collect();
    let has_specs = !specs.is_empty();
    // The list ends with a zeroed entry (begin_search_type 0).
    specs.push(KeySpec {
        notes: std::ptr::null(),
        flags: 0,
        begin_search_type: 0,
        bs: BeginSearch {
            index: BsIndex { pos: 0 },
        },
        find_keys_type: 0,
        fk: FindKeys { a: 0, b: 0, c: 0 },
    });
    let summary = CString::new(spec.summary).unwrap_or_default();
    let tips = CString::new(keyspecs::tips(spec.name)).unwrap_or_default();
    let info = CommandInfo {
        version: &VERSION,
        summary: summary.as_ptr(),
        complexity: std::ptr::null(),
        since: std::ptr::null(),
        history: std::ptr::null_mut(),
        tips: if tips.as_bytes().is_empty() {
            std::ptr::null()
        } else {
            tips.as_ptr()
        },
        arity: spec.arity,
        key_specs: if has_specs {
            specs.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        },
        args: std::ptr::null_mut(),
    };
    (a.SetCommandInfo)(cmd, &info as *const CommandInfo as *const c_void) == crate::ffi::OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_redismodule_h() {
        assert_eq!(std::mem::size_of::<KeySpec>(), 56);
        assert_eq!(std::mem::size_of::<CommandInfo>(), 72);
        assert_eq!(std::mem::size_of::<InfoVersion>(), 32);
    }

    #[test]
    fn flag_words() {
        assert_eq!(key_flag_bits(&["RO", "access"]), 1 | 16);
        assert_eq!(key_flag_bits(&["OW", "update"]), 4 | 32);
        assert_eq!(key_flag_bits(&["RW", "insert"]), 2 | 64);
    }
}
