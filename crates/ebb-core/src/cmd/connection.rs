//! Connection commands that need no connection state: PING, ECHO.

use bytes::Bytes;

use crate::args::Args;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;

/// The connection family's commands.
#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core(
        "ping",
        -1,
        "fast",
        (0, 0, 0),
        "connection",
        "Returns the server's liveliness response.",
        ping,
    ),
    CommandSpec::core(
        "echo",
        2,
        "loading stale fast",
        (0, 0, 0),
        "connection",
        "Returns the given string.",
        echo,
    ),
];

/// # Format
/// `PING [message]` → `PONG`, or the message as a bulk string.
fn ping(_ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    match a.remaining() {
        0 => Ok(Reply::simple("PONG")),
        1 => Ok(Reply::Bulk(Bytes::copy_from_slice(a.bytes()?))),
        _ => Err(Error::WrongArity("ping".into())),
    }
}

/// # Format
/// `ECHO message` → the message.
fn echo(_ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    Ok(Reply::Bulk(Bytes::copy_from_slice(a.bytes()?)))
}
