//! The part of Redis's module API (`redismodule.h`, API version 1, Redis
//! 7.0) the module uses, declared by hand: the server hands a module one
//! lookup function, and every other entry point is fetched from it by name
//! when the module loads.

use std::ffi::{c_char, c_int, c_long, c_longlong, c_void};
use std::sync::OnceLock;

/// Opaque server objects.
#[repr(C)]
pub struct Ctx {
    _p: [u8; 0],
}
#[repr(C)]
pub struct RString {
    _p: [u8; 0],
}
#[repr(C)]
pub struct Key {
    _p: [u8; 0],
}
#[repr(C)]
pub struct ModuleType {
    _p: [u8; 0],
}
#[repr(C)]
pub struct Io {
    _p: [u8; 0],
}
#[repr(C)]
pub struct BlockedClient {
    _p: [u8; 0],
}
#[repr(C)]
pub struct Command {
    _p: [u8; 0],
}
#[repr(C)]
pub struct ServerInfo {
    _p: [u8; 0],
}

pub const OK: c_int = 0;
pub const ERR: c_int = 1;
pub const APIVER_1: c_int = 1;
pub const TYPE_METHOD_VERSION: u64 = 4;

pub const OPTION_NO_IMPLICIT_SIGNAL_MODIFIED: c_int = 1 << 1;
pub const READ: c_int = 1;
pub const WRITE: c_int = 1 << 1;
/// Opening a key does not count as an access (LRU/LFU).
pub const OPEN_KEY_NOTOUCH: c_int = 1 << 16;

pub const KEYTYPE_EMPTY: c_int = 0;
pub const KEYTYPE_STRING: c_int = 1;
pub const KEYTYPE_LIST: c_int = 2;
pub const KEYTYPE_HASH: c_int = 3;
pub const KEYTYPE_SET: c_int = 4;
pub const KEYTYPE_ZSET: c_int = 5;
pub const KEYTYPE_STREAM: c_int = 7;

pub const NO_EXPIRE: c_longlong = -1;

pub const CTX_FLAGS_LUA: c_int = 1;
pub const CTX_FLAGS_MULTI: c_int = 1 << 1;
pub const CTX_FLAGS_DENY_BLOCKING: c_int = 1 << 21;
pub const CTX_FLAGS_AOF: c_int = 1 << 6;
pub const CTX_FLAGS_SLAVE: c_int = 1 << 3;
pub const CTX_FLAGS_REPLICATED: c_int = 1 << 12;
pub const CTX_FLAGS_LOADING: c_int = 1 << 13;
pub const CTX_FLAGS_RESP3: c_int = 1 << 22;

pub const NOTIFY_GENERIC: c_int = 1 << 2;
pub const NOTIFY_STRING: c_int = 1 << 3;
pub const NOTIFY_LIST: c_int = 1 << 4;
pub const NOTIFY_SET: c_int = 1 << 5;
pub const NOTIFY_HASH: c_int = 1 << 6;
pub const NOTIFY_ZSET: c_int = 1 << 7;
pub const NOTIFY_EXPIRED: c_int = 1 << 8;
pub const NOTIFY_EVICTED: c_int = 1 << 9;
pub const NOTIFY_LOADED: c_int = 1 << 12;

pub const EVENT_ROLE_CHANGED: u64 = 0;
pub const EVENT_FLUSHDB: u64 = 2;
pub const SUBEVENT_FLUSHDB_END: u64 = 1;
pub const EVENT_REPLICA_CHANGE: u64 = 6;
pub const EVENT_SWAPDB: u64 = 11;
pub const EVENT_FORK_CHILD: u64 = 13;

/// A server event to subscribe to.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Event {
    pub id: u64,
    pub dataver: u64,
}

/// What a FLUSHDB event carries.
#[repr(C)]
pub struct FlushInfo {
    pub version: u64,
    pub sync: i32,
    pub dbnum: i32,
}

/// What a SWAPDB event carries.
#[repr(C)]
pub struct SwapDbInfo {
    pub version: u64,
    pub first: i32,
    pub second: i32,
}

pub type CmdFunc = unsafe extern "C" fn(*mut Ctx, *mut *mut RString, c_int) -> c_int;
pub type FreePrivdata = unsafe extern "C" fn(*mut Ctx, *mut c_void);
pub type ConfigGet = unsafe extern "C" fn(*const c_char, *mut c_void) -> *mut RString;
pub type ConfigSet =
    unsafe extern "C" fn(*const c_char, *mut RString, *mut c_void, *mut *mut RString) -> c_int;
pub type ConfigApply = unsafe extern "C" fn(*mut Ctx, *mut c_void, *mut *mut RString) -> c_int;
pub type TimerProc = unsafe extern "C" fn(*mut Ctx, *mut c_void);
pub type NotifyFunc = unsafe extern "C" fn(*mut Ctx, c_int, *const c_char, *mut RString) -> c_int;
pub type EventCallback = unsafe extern "C" fn(*mut Ctx, Event, u64, *mut c_void);

/// The data type's callbacks (`RedisModuleTypeMethods`, version 4).
#[repr(C)]
pub struct TypeMethods {
    pub version: u64,
    pub rdb_load: Option<unsafe extern "C" fn(*mut Io, c_int) -> *mut c_void>,
    pub rdb_save: Option<unsafe extern "C" fn(*mut Io, *mut c_void)>,
    pub aof_rewrite: Option<unsafe extern "C" fn(*mut Io, *mut RString, *mut c_void)>,
    pub mem_usage: Option<unsafe extern "C" fn(*const c_void) -> usize>,
    pub digest: Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>,
    pub free: Option<unsafe extern "C" fn(*mut c_void)>,
    pub aux_load: Option<unsafe extern "C" fn(*mut Io, c_int, c_int) -> c_int>,
    pub aux_save: Option<unsafe extern "C" fn(*mut Io, c_int)>,
    pub aux_save_triggers: c_int,
    pub free_effort: Option<unsafe extern "C" fn(*mut RString, *const c_void) -> usize>,
    pub unlink: Option<unsafe extern "C" fn(*mut RString, *const c_void)>,
    pub copy:
        Option<unsafe extern "C" fn(*mut RString, *mut RString, *const c_void) -> *mut c_void>,
    pub defrag: Option<unsafe extern "C" fn(*mut c_void, *mut RString, *mut *mut c_void) -> c_int>,
    pub mem_usage2: Option<unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> usize>,
    pub free_effort2: Option<unsafe extern "C" fn(*mut c_void, *const c_void) -> usize>,
    pub unlink2: Option<unsafe extern "C" fn(*mut c_void, *const c_void)>,
    pub copy2: Option<unsafe extern "C" fn(*mut c_void, *const c_void) -> *mut c_void>,
}

/// `RedisModule_GetApi`: fetches an entry point by name.
pub type GetApi = unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;

macro_rules! api {
    ($($name:ident : fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The entry points, fetched once at load.
        pub struct Api {
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            pub Replicate: unsafe extern "C" fn(*mut Ctx, *const c_char, *const c_char, ...) -> c_int,
            pub EmitAOF: unsafe extern "C" fn(*mut Io, *const c_char, *const c_char, ...),
        }

        impl Api {
            /// Fetches every entry point; `None` if one is missing (a
            /// server older than the module needs).
            ///
            /// # Safety
            /// `get` must be the server's `RedisModule_GetApi`.
            pub unsafe fn load(get: GetApi) -> Option<Api> {
                unsafe fn one(get: GetApi, name: &str) -> Option<*mut c_void> {
                    let mut p: *mut c_void = std::ptr::null_mut();
                    let ok = get(name.as_ptr() as *const c_char, &mut p as *mut *mut c_void as *mut c_void);
                    (ok == OK && !p.is_null()).then_some(p)
                }
                Some(Api {
                    $($name: std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) $(-> $ret)?>(
                        one(get, concat!("RedisModule_", stringify!($name), "\0"))?,
                    ),)*
                    Replicate: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut Ctx, *const c_char, *const c_char, ...) -> c_int>(
                        one(get, "RedisModule_Replicate\0")?,
                    ),
                    EmitAOF: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut Io, *const c_char, *const c_char, ...)>(
                        one(get, "RedisModule_EmitAOF\0")?,
                    ),
                })
            }
        }
    };
}

#[allow(non_snake_case)]
mod table {
    use super::*;
    api! {
        SetModuleAttribs: fn(*mut Ctx, *const c_char, c_int, c_int);
        IsModuleNameBusy: fn(*const c_char) -> c_int;
        CreateCommand: fn(*mut Ctx, *const c_char, CmdFunc, *const c_char, c_int, c_int, c_int) -> c_int;
        CreateDataType: fn(*mut Ctx, *const c_char, c_int, *mut TypeMethods) -> *mut ModuleType;
        ModuleTypeSetValue: fn(*mut Key, *mut ModuleType, *mut c_void) -> c_int;
        ModuleTypeGetType: fn(*mut Key) -> *mut ModuleType;
        ModuleTypeGetValue: fn(*mut Key) -> *mut c_void;
        OpenKey: fn(*mut Ctx, *mut RString, c_int) -> *mut Key;
        CloseKey: fn(*mut Key);
        KeyType: fn(*mut Key) -> c_int;
        DeleteKey: fn(*mut Key) -> c_int;
        GetAbsExpire: fn(*mut Key) -> c_longlong;
        SetAbsExpire: fn(*mut Key, c_longlong) -> c_int;
        AvoidReplicaTraffic: fn() -> c_int;
        StringPtrLen: fn(*const RString, *mut usize) -> *const c_char;
        StringDMA: fn(*mut Key, *mut usize, c_int) -> *mut c_char;
        StringSet: fn(*mut Key, *mut RString) -> c_int;
        CreateString: fn(*mut Ctx, *const c_char, usize) -> *mut RString;
        FreeString: fn(*mut Ctx, *mut RString);
        WrongArity: fn(*mut Ctx) -> c_int;
        ReplyWithLongLong: fn(*mut Ctx, c_longlong) -> c_int;
        ReplyWithError: fn(*mut Ctx, *const c_char) -> c_int;
        ReplyWithSimpleString: fn(*mut Ctx, *const c_char) -> c_int;
        ReplyWithStringBuffer: fn(*mut Ctx, *const c_char, usize) -> c_int;
        ReplyWithNull: fn(*mut Ctx) -> c_int;
        ReplyWithNullArray: fn(*mut Ctx) -> c_int;
        ReplyWithArray: fn(*mut Ctx, c_long) -> c_int;
        ReplyWithMap: fn(*mut Ctx, c_long) -> c_int;
        ReplyWithSet: fn(*mut Ctx, c_long) -> c_int;
        ReplyWithDouble: fn(*mut Ctx, f64) -> c_int;
        ReplyWithBool: fn(*mut Ctx, c_int) -> c_int;
        ReplyWithBigNumber: fn(*mut Ctx, *const c_char, usize) -> c_int;
        ReplyWithVerbatimString: fn(*mut Ctx, *const c_char, usize) -> c_int;
        ReplicateVerbatim: fn(*mut Ctx) -> c_int;
        GetSelectedDb: fn(*mut Ctx) -> c_int;
        SelectDb: fn(*mut Ctx, c_int) -> c_int;
        Milliseconds: fn() -> c_longlong;
        CreateTimer: fn(*mut Ctx, c_longlong, TimerProc, *mut c_void) -> u64;
        NotifyKeyspaceEvent: fn(*mut Ctx, c_int, *const c_char, *mut RString) -> c_int;
        SubscribeToKeyspaceEvents: fn(*mut Ctx, c_int, NotifyFunc) -> c_int;
        SubscribeToServerEvent: fn(*mut Ctx, Event, EventCallback) -> c_int;
        SaveStringBuffer: fn(*mut Io, *const c_char, usize);
        LoadStringBuffer: fn(*mut Io, *mut usize) -> *mut c_char;
        Free: fn(*mut c_void);
        KeyAtPosWithFlags: fn(*mut Ctx, c_int, c_int);
        SetModuleOptions: fn(*mut Ctx, c_int);
        SignalModifiedKey: fn(*mut Ctx, *mut RString) -> c_int;
        GetCommand: fn(*mut Ctx, *const c_char) -> *mut Command;
        SetCommandInfo: fn(*mut Command, *const c_void) -> c_int;
        IsKeysPositionRequest: fn(*mut Ctx) -> c_int;
        GetContextFlags: fn(*mut Ctx) -> c_int;
        GetNotifyKeyspaceEvents: fn() -> c_int;
        PublishMessage: fn(*mut Ctx, *mut RString, *mut RString) -> c_int;
        RegisterStringConfig: fn(*mut Ctx, *const c_char, *const c_char, std::ffi::c_uint, ConfigGet, ConfigSet, Option<ConfigApply>, *mut c_void) -> c_int;
        LoadConfigs: fn(*mut Ctx) -> c_int;
        BlockClientOnKeys: fn(*mut Ctx, CmdFunc, CmdFunc, FreePrivdata, c_longlong, *mut *mut RString, c_int, *mut c_void) -> *mut BlockedClient;
        SignalKeyAsReady: fn(*mut Ctx, *mut RString);
        DigestAddStringBuffer: fn(*mut c_void, *const c_char, usize);
        DigestEndSequence: fn(*mut c_void);
        GetServerInfo: fn(*mut Ctx, *const c_char) -> *mut ServerInfo;
        FreeServerInfo: fn(*mut Ctx, *mut ServerInfo);
        ServerInfoGetFieldSigned: fn(*mut ServerInfo, *const c_char, *mut c_int) -> c_longlong;
    }
}
pub use table::Api;

static API: OnceLock<Api> = OnceLock::new();

/// The entry points. Only called after a successful load: every callback
/// the server makes comes after `RedisModule_OnLoad`.
pub fn api() -> &'static Api {
    match API.get() {
        Some(a) => a,
        None => std::process::abort(),
    }
}

/// Keeps the entry points for [`api`]; false if they were set already.
pub fn set_api(a: Api) -> bool {
    API.set(a).is_ok()
}

/// The bytes of a server string (valid while the string is).
///
/// # Safety
/// `s` must be a live server string.
pub unsafe fn bytes<'a>(s: *const RString) -> &'a [u8] {
    let mut len = 0usize;
    let p = (api().StringPtrLen)(s, &mut len);
    if p.is_null() || len == 0 {
        return &[];
    }
    std::slice::from_raw_parts(p as *const u8, len)
}
