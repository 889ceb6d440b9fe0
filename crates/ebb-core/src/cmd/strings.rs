//! Strings: GET, SET and friends.

use bytes::Bytes;

use crate::args::Args;
use crate::ctx::Ctx;
use crate::error::CmdResult;
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::Value;

/// The string family's commands.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core(
        "get",
        2,
        "readonly fast",
        (1, 1, 1),
        "string",
        "Returns the string value of a key.",
        get,
    ),
    CommandSpec::core(
        "set",
        -3,
        "write denyoom",
        (1, 1, 1),
        "string",
        "Sets the string value of a key.",
        set,
    ),
];

/// # Format
/// `GET key` → the value, or nil.
fn get(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    Ok(match ctx.get::<Bytes>(key)? {
        Some(v) => Reply::Bulk(v.clone()),
        None => Reply::Nil,
    })
}

/// # Format
/// `SET key value` → OK.
fn set(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let val = a.owned()?;
    a.finish()?;
    ctx.set_value(key, Value::Str(val));
    ctx.modified(key);
    ctx.notify(b'$', "set", key);
    Ok(Reply::Ok)
}
