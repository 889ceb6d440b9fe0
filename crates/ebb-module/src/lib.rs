//! ebb as a module for Redis 7: sets, sorted sets and hashes whose members
//! carry their own deadlines, with core's commands under the `ebb.` prefix
//! (`ebb.zaddex`, `ebb.saddex`, `ebb.hexpire`, `ebb.zrange`, …), so that a
//! Redis Cluster shards them. Load with `--loadmodule libebb_module.so`.
//!
//! Core's command semantics run unchanged (see `host`); the module adds the
//! glue: the data type, replies, events, replication and active expiry.

#![allow(clippy::missing_safety_doc)]

mod alloc;
mod cmdinfo;
mod events;
mod expiry;
mod ffi;
mod host;
mod names;
mod reply;
mod vtype;

use std::ffi::{c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use ffi::{api, Ctx, RString};

#[global_allocator]
static ALLOC: alloc::ServerAlloc = alloc::ServerAlloc;

/// The server's entry point.
///
/// # Safety
/// Called by the server with its module context.
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
    ctx: *mut Ctx,
    _argv: *mut *mut RString,
    _argc: c_int,
) -> c_int {
    let get: ffi::GetApi =
        std::mem::transmute::<*mut c_void, ffi::GetApi>(*(ctx as *mut *mut c_void));
    if !alloc::init(get) {
        return ffi::ERR;
    }
    let Some(table) = ffi::Api::load(get) else {
        return ffi::ERR;
    };
    if !ffi::set_api(table) {
        return ffi::ERR;
    }
    let a = api();
    if (a.IsModuleNameBusy)(c"ebb".as_ptr()) != 0 {
        return ffi::ERR;
    }
    (a.SetModuleAttribs)(ctx, c"ebb".as_ptr(), 1, ffi::APIVER_1);
    // Keys changed are signalled one by one (a key opened for writing that
    // a command leaves as it was is not a change).
    (a.SetModuleOptions)(ctx, ffi::OPTION_NO_IMPLICIT_SIGNAL_MODIFIED);
    // Options first: a refused value fails the load before anything that
    // outlives a failed load (event subscriptions) is registered.
    if !events::register(ctx) || (a.LoadConfigs)(ctx) != ffi::OK {
        return ffi::ERR;
    }

    let mut methods = vtype::methods();
    let t = (a.CreateDataType)(
        ctx,
        vtype::NAME.as_ptr() as *const _,
        vtype::ENCODING,
        &mut methods,
    );
    if t.is_null() {
        return ffi::ERR;
    }
    host::TYPE.store(t, Ordering::Relaxed);

    for (spec, name) in names::all_served() {
        let Ok(flags) = CString::new(names::module_flags(spec)) else {
            return ffi::ERR;
        };
        let (first, last, step) = if spec.keys.is_some() {
            (0, 0, 0)
        } else {
            (spec.first_key, spec.last_key, spec.step)
        };
        if (a.CreateCommand)(
            ctx,
            name.as_ptr(),
            command,
            flags.as_ptr(),
            first,
            last,
            step,
        ) != ffi::OK
        {
            return ffi::ERR;
        }
        // Without it the command still works, with the legacy key range.
        cmdinfo::describe(ctx, name, spec);
    }

    (a.SubscribeToKeyspaceEvents)(
        ctx,
        ffi::NOTIFY_GENERIC | ffi::NOTIFY_EXPIRED | ffi::NOTIFY_EVICTED | ffi::NOTIFY_LOADED,
        expiry::on_key_event,
    );
    (a.SubscribeToServerEvent)(
        ctx,
        ffi::Event {
            id: ffi::EVENT_FLUSHDB,
            dataver: 1,
        },
        expiry::on_flush,
    );
    (a.SubscribeToServerEvent)(
        ctx,
        ffi::Event {
            id: ffi::EVENT_SWAPDB,
            dataver: 1,
        },
        expiry::on_swapdb,
    );
    for id in [
        ffi::EVENT_FORK_CHILD,
        ffi::EVENT_REPLICA_CHANGE,
        ffi::EVENT_ROLE_CHANGED,
    ] {
        (a.SubscribeToServerEvent)(ctx, ffi::Event { id, dataver: 1 }, on_replication_event);
    }
    if replicating(ctx) {
        host::REPLICATION.store(true, Ordering::Relaxed);
    }
    expiry::start(ctx);
    ffi::OK
}

/// Whether the server keeps a replication backlog or has replicas (a
/// module loaded into a running primary).
unsafe fn replicating(ctx: *mut Ctx) -> bool {
    let a = api();
    let info = (a.GetServerInfo)(ctx, c"replication".as_ptr());
    if info.is_null() {
        return true;
    }
    let mut err = 0;
    let backlog = (a.ServerInfoGetFieldSigned)(info, c"repl_backlog_active".as_ptr(), &mut err);
    let known = err == 0;
    let replicas = (a.ServerInfoGetFieldSigned)(info, c"connected_slaves".as_ptr(), &mut err);
    (a.FreeServerInfo)(ctx, info);
    !known || err != 0 || backlog != 0 || replicas != 0
}

unsafe extern "C" fn on_replication_event(
    _ctx: *mut Ctx,
    _e: ffi::Event,
    _sub: u64,
    _data: *mut c_void,
) {
    host::REPLICATION.store(true, Ordering::Relaxed);
}

/// Every module command comes here.
unsafe extern "C" fn command(ctx: *mut Ctx, argv: *mut *mut RString, argc: c_int) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| {
        dispatch(ctx, argv, argc, host::Mode::MayBlock)
    }));
    match result {
        Ok(r) => r,
        Err(_) => {
            reply::error(ctx, "ERR internal error in the ebb module");
            ffi::OK
        }
    }
}

/// A parked client's keys were signalled: its command runs again, and
/// replies only if it found something.
pub(crate) unsafe extern "C" fn on_keys_ready(
    ctx: *mut Ctx,
    argv: *mut *mut RString,
    argc: c_int,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| {
        dispatch(ctx, argv, argc, host::Mode::Unblock)
    }));
    result.unwrap_or(ffi::ERR)
}

unsafe fn dispatch(ctx: *mut Ctx, argv: *mut *mut RString, argc: c_int, mode: host::Mode) -> c_int {
    let a = api();
    if argv.is_null() || argc < 1 {
        return (a.WrongArity)(ctx);
    }
    let argv = std::slice::from_raw_parts(argv, argc as usize);
    let mut args: Vec<&[u8]> = argv.iter().map(|s| ffi::bytes(*s)).collect();
    let Some(spec) = names::spec_of(args[0]) else {
        reply::error(ctx, "ERR unknown command");
        return ffi::OK;
    };
    args[0] = spec.name.as_bytes();
    let arity_ok = spec.arity_ok(args.len());
    if (a.IsKeysPositionRequest)(ctx) != 0 {
        if arity_ok {
            for p in spec.key_positions(&args) {
                let words = ebb_core::keyspecs::flags_at(spec.name, &args, p);
                (a.KeyAtPosWithFlags)(ctx, p as c_int, cmdinfo::key_flag_bits(words) as c_int);
            }
        }
        return ffi::OK;
    }
    if !arity_ok {
        return (a.WrongArity)(ctx);
    }
    if spec.name == "type" {
        if let Some(t) = server_type(ctx, argv[1]) {
            (a.ReplyWithSimpleString)(ctx, t.as_ptr());
            return ffi::OK;
        }
    }
    host::run(ctx, spec, argv, &args, mode)
}

/// TYPE of a key of one of the server's own types (core would see the
/// stand-in string); `None` for the module's keys and missing ones.
unsafe fn server_type(ctx: *mut Ctx, key: *mut RString) -> Option<&'static std::ffi::CStr> {
    let a = api();
    let k = (a.OpenKey)(ctx, key, ffi::READ);
    let t = (a.KeyType)(k);
    let ours =
        t != ffi::KEYTYPE_EMPTY && (a.ModuleTypeGetType)(k) == host::TYPE.load(Ordering::Relaxed);
    (a.CloseKey)(k);
    if ours {
        return None;
    }
    match t {
        ffi::KEYTYPE_EMPTY => None,
        ffi::KEYTYPE_STRING => Some(c"string"),
        ffi::KEYTYPE_LIST => Some(c"list"),
        ffi::KEYTYPE_HASH => Some(c"hash"),
        ffi::KEYTYPE_SET => Some(c"set"),
        ffi::KEYTYPE_ZSET => Some(c"zset"),
        ffi::KEYTYPE_STREAM => Some(c"stream"),
        _ => Some(c"none"),
    }
}
