//! Counters: INCR, DECR, INCRBY, DECRBY (64-bit integers) and INCRBYFLOAT
//! (x87 extended precision, see `long_double.rs`). All keep the key's TTL.

use bytes::Bytes;

use super::long_double::LongDouble;
use super::store_keep_ttl;
use crate::args::{parse_i64, Args};
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::value::strval::Written;
use crate::value::{StrValue, Value};

/// Writes `n` in decimal into `buf`, returning the digits.
fn format_i64(n: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    let mut m = n.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Adds `delta` to the integer stored at `key` (0 if missing).
fn incr_by(ctx: &mut Ctx, key: &[u8], delta: i64) -> CmdResult<Reply> {
    let mut digits = [0u8; 20];
    let new = match ctx.get_mut::<StrValue>(key)? {
        None => {
            let new = delta;
            ctx.set_value(key, Value::Str(StrValue::new(format_i64(new, &mut digits))));
            new
        }
        Some(v) => {
            let cur = parse_i64(v).ok_or(Error::NotInteger)?;
            let new = cur.checked_add(delta).ok_or(Error::Overflow)?;
            // Rewritten whole (keeping the TTL): an integer fits inline.
            *v = StrValue::new(format_i64(new, &mut digits));
            new
        }
    };
    ctx.modified(key);
    ctx.notify(b'$', "incrby", key);
    Ok(Reply::Int(new))
}

/// # Format
/// `INCR key` → the value after adding 1.
pub(super) fn incr(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    incr_by(ctx, key, 1)
}

/// # Format
/// `DECR key` → the value after subtracting 1.
pub(super) fn decr(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    incr_by(ctx, key, -1)
}

/// # Format
/// `INCRBY key increment` → the value after adding `increment`.
pub(super) fn incrby(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let delta = a.i64()?;
    incr_by(ctx, key, delta)
}

/// # Format
/// `DECRBY key decrement` → the value after subtracting `decrement`.
pub(super) fn decrby(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let delta = a.i64()?;
    if delta == i64::MIN {
        return Err(Error::msg("ERR decrement would overflow"));
    }
    incr_by(ctx, key, -delta)
}

/// # Format
/// `INCRBYFLOAT key increment` → the new value as a bulk string, computed
/// and formatted exactly as Redis does (extended precision, `%.17Lf`
/// without trailing zeros). Logged as `SET key new-value KEEPTTL`.
pub(super) fn incrbyfloat(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let raw = a.bytes()?;
    let cur = match ctx.get_for_write::<StrValue>(key)? {
        None => LongDouble::ZERO,
        Some(v) => LongDouble::parse(v).ok_or(Error::NotFloat)?,
    };
    let incr = LongDouble::parse(raw).ok_or(Error::NotFloat)?;
    let sum = cur
        .checked_add(incr)
        .ok_or_else(|| Error::msg("ERR increment would produce NaN or Infinity"))?;
    let new = Bytes::from(sum.to_human_string());
    let mut text = StrValue::new(&new);
    text.set_written(Written::Text);
    store_keep_ttl(ctx, key, text)?;
    ctx.modified(key);
    ctx.notify(b'$', "incrbyfloat", key);
    ctx.rewrite_as(vec![vec![
        Bytes::from_static(b"SET"),
        Bytes::copy_from_slice(key),
        new.clone(),
        Bytes::from_static(b"KEEPTTL"),
    ]]);
    Ok(Reply::Bulk(new))
}

#[cfg(test)]
mod tests {
    use super::format_i64;

    #[test]
    fn integers_format_like_redis() {
        for n in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            12345,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            let mut buf = [0u8; 20];
            assert_eq!(format_i64(n, &mut buf), n.to_string().as_bytes());
        }
    }
}
