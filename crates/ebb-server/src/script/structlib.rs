//! The `struct` library of Redis's Lua environment: `pack`, `unpack` and
//! `size` over format strings of `<` `>` (byte order, little-endian by
//! default), `!n` (alignment), `b B h H l L T i[n] I[n]` (integers), `f d`
//! (floats), `c[n]` (fixed strings, `c0` sized by the preceding value),
//! `s` (zero-terminated strings) and `x` (a padding byte).

use mlua::{Lua, MultiValue, Table, Value};

use super::convert::{to_number, truncate};
use super::libs::{bad_arg, check_number, check_string, set_multi};

const MAX_INT_SIZE: usize = 32;
const MAX_ALIGN: usize = 8;

/// Format state: byte order and maximum alignment.
struct Header {
    little: bool,
    align: usize,
}

impl Header {
    fn new() -> Header {
        Header {
            little: true,
            align: 1,
        }
    }
}

fn fail(m: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(m.into())
}

/// The `struct` table.
pub fn structlib(lua: &Lua, state: &Table) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    set_multi(lua, &t, state, "pack", &[], pack)?;
    set_multi(lua, &t, state, "unpack", &[], unpack)?;
    set_multi(lua, &t, state, "size", &[], size)?;
    Ok(t)
}

/// Argument `i` (0-based) as a string.
fn string_arg(a: &MultiValue, i: usize, func: &str) -> mlua::Result<Vec<u8>> {
    check_string(a.get(i), i + 1, func)
}

/// Argument `i` (0-based) as a number.
fn number_arg(a: &MultiValue, i: usize, func: &str) -> mlua::Result<f64> {
    check_number(a.get(i), i + 1, func)
}

/// Reads the digits at `fmt[*i..]`, or `default` when there are none.
fn get_num(fmt: &[u8], i: &mut usize, default: usize) -> mlua::Result<usize> {
    if !fmt.get(*i).is_some_and(u8::is_ascii_digit) {
        return Ok(default);
    }
    let mut a: usize = 0;
    while let Some(d) = fmt.get(*i).filter(|c| c.is_ascii_digit()) {
        let d = (d - b'0') as usize;
        if a > (i32::MAX as usize) / 10 || a * 10 > i32::MAX as usize - d {
            return Err(fail("integral size overflow"));
        }
        a = a * 10 + d;
        *i += 1;
    }
    Ok(a)
}

/// The size of option `opt` (reading its count, if any).
fn opt_size(opt: u8, fmt: &[u8], i: &mut usize) -> mlua::Result<usize> {
    Ok(match opt {
        b'B' | b'b' | b'x' => 1,
        b'H' | b'h' => 2,
        b'L' | b'l' | b'T' | b'd' => 8,
        b'f' => 4,
        b'c' => get_num(fmt, i, 1)?,
        b'i' | b'I' => {
            let n = get_num(fmt, i, 4)?;
            if n > MAX_INT_SIZE {
                return Err(fail(format!(
                    "integral size {n} is larger than limit of {MAX_INT_SIZE}"
                )));
            }
            n
        }
        _ => 0,
    })
}

/// Padding needed before an item of `size` bytes at offset `len`.
fn to_align(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size - (len & (size - 1))) & (size - 1)
}

/// Byte order and alignment options (and blanks); anything else is an
/// invalid option.
fn control(opt: u8, fmt: &[u8], i: &mut usize, h: &mut Header, func: &str) -> mlua::Result<()> {
    match opt {
        b' ' => {}
        b'>' => h.little = false,
        b'<' => h.little = true,
        b'!' => {
            let a = get_num(fmt, i, MAX_ALIGN)?;
            if a == 0 || !a.is_power_of_two() {
                return Err(fail(format!("alignment {a} is not a power of 2")));
            }
            h.align = a;
        }
        other => {
            return Err(bad_arg(
                1,
                func,
                &format!("invalid format option '{}'", other as char),
            ))
        }
    }
    Ok(())
}

fn is_int_opt(opt: u8) -> bool {
    matches!(
        opt,
        b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I'
    )
}

fn put_int(out: &mut Vec<u8>, n: f64, little: bool, size: usize) {
    let mut v: u64 = if n < 0.0 { n as i64 as u64 } else { n as u64 };
    let mut buf = vec![0u8; size];
    if little {
        for b in buf.iter_mut() {
            *b = v as u8;
            v = v.checked_shr(8).unwrap_or(0);
        }
    } else {
        for b in buf.iter_mut().rev() {
            *b = v as u8;
            v = v.checked_shr(8).unwrap_or(0);
        }
    }
    out.extend_from_slice(&buf);
}

fn get_int(b: &[u8], little: bool, signed: bool) -> f64 {
    let mut l: u64 = 0;
    let mut push = |x: u8| l = l.checked_shl(8).unwrap_or(0) | x as u64;
    if little {
        b.iter().rev().for_each(|&x| push(x));
    } else {
        b.iter().for_each(|&x| push(x));
    }
    let size = b.len();
    if !signed {
        return l as f64;
    }
    if size == 0 {
        return 0.0;
    }
    let mask = if size * 8 > 64 {
        0
    } else {
        u64::MAX << (size * 8 - 1)
    };
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

fn pack(lua: &Lua, a: MultiValue) -> mlua::Result<MultiValue> {
    let fmt = string_arg(&a, 0, "pack")?;
    // Past the last argument lies a nil (the C function pushes one to
    // separate its arguments from its buffer), so a missing value is
    // reported as a nil.
    let value = |i: usize| Some(a.get(i).unwrap_or(&Value::Nil));
    let number_at = |i: usize| check_number(value(i), i + 1, "pack");
    let string_at = |i: usize| check_string(value(i), i + 1, "pack");
    let mut h = Header::new();
    let mut arg = 1;
    let mut total = 0usize;
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = opt_size(opt, &fmt, &mut i)?;
        let pad = to_align(total, &h, opt, size);
        total += pad;
        out.resize(out.len() + pad, 0);
        match opt {
            o if is_int_opt(o) => {
                let n = number_at(arg)?;
                arg += 1;
                put_int(&mut out, n, h.little, size);
            }
            b'x' => out.push(0),
            b'f' => {
                let f = number_at(arg)? as f32;
                arg += 1;
                out.extend_from_slice(&if h.little {
                    f.to_le_bytes()
                } else {
                    f.to_be_bytes()
                });
            }
            b'd' => {
                let d = number_at(arg)?;
                arg += 1;
                out.extend_from_slice(&if h.little {
                    d.to_le_bytes()
                } else {
                    d.to_be_bytes()
                });
            }
            b'c' | b's' => {
                let s = string_at(arg)?;
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    return Err(bad_arg(arg + 1, "pack", "string too short"));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                    size += 1;
                }
            }
            o => control(o, &fmt, &mut i, &mut h, "pack")?,
        }
        total += size;
    }
    Ok(MultiValue::from_vec(vec![Value::String(
        lua.create_string(out)?,
    )]))
}

fn unpack(lua: &Lua, a: MultiValue) -> mlua::Result<MultiValue> {
    let fmt = string_arg(&a, 0, "unpack")?;
    let data = string_arg(&a, 1, "unpack")?;
    let ld = data.len();
    // The offset as a C integer (`luaL_optinteger`), made 0-based in an
    // unsigned size: offsets below 1 other than 0 wrap around to sizes
    // past the data's end.
    let start = match a.get(2) {
        None | Some(Value::Nil) => 1,
        Some(_) => truncate(number_arg(&a, 2, "unpack")?),
    };
    if start == 0 {
        return Err(bad_arg(3, "unpack", "offset must be 1 or greater"));
    }
    let mut pos = (start as usize).wrapping_sub(1);
    let mut h = Header::new();
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    let short = || bad_arg(2, "unpack", "data string too short");
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = opt_size(opt, &fmt, &mut i)?;
        pos = pos.wrapping_add(to_align(pos, &h, opt, size));
        if size > ld || pos > ld - size {
            return Err(short());
        }
        match opt {
            o if is_int_opt(o) => {
                let v = get_int(&data[pos..pos + size], h.little, o.is_ascii_lowercase());
                out.push(Value::Number(v));
            }
            b'x' => {}
            b'f' => {
                let mut b = [0u8; 4];
                b.copy_from_slice(&data[pos..pos + 4]);
                let f = if h.little {
                    f32::from_le_bytes(b)
                } else {
                    f32::from_be_bytes(b)
                };
                out.push(Value::Number(f as f64));
            }
            b'd' => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&data[pos..pos + 8]);
                let d = if h.little {
                    f64::from_le_bytes(b)
                } else {
                    f64::from_be_bytes(b)
                };
                out.push(Value::Number(d));
            }
            b'c' => {
                if size == 0 {
                    let prev = out.last().and_then(to_number);
                    let Some(n) = prev else {
                        return Err(fail("format 'c0' needs a previous size"));
                    };
                    out.pop();
                    size = n as usize;
                    if size > ld || pos > ld - size {
                        return Err(short());
                    }
                }
                out.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(end) = data[pos..].iter().position(|&b| b == 0) else {
                    return Err(fail("unfinished string in data"));
                };
                out.push(Value::String(lua.create_string(&data[pos..pos + end])?));
                size = end + 1;
            }
            o => control(o, &fmt, &mut i, &mut h, "unpack")?,
        }
        pos += size;
    }
    out.push(Value::Number((pos + 1) as f64));
    Ok(MultiValue::from_vec(out))
}

fn size(_: &Lua, a: MultiValue) -> mlua::Result<MultiValue> {
    let fmt = string_arg(&a, 0, "size")?;
    let mut h = Header::new();
    let mut pos = 0usize;
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let size = opt_size(opt, &fmt, &mut i)?;
        pos += to_align(pos, &h, opt, size);
        if opt == b's' {
            return Err(bad_arg(1, "size", "option 's' has no fixed size"));
        }
        if opt == b'c' && size == 0 {
            return Err(bad_arg(1, "size", "option 'c0' has no fixed size"));
        }
        if !opt.is_ascii_alphanumeric() {
            control(opt, &fmt, &mut i, &mut h, "size")?;
        }
        pos += size;
    }
    Ok(MultiValue::from_vec(vec![Value::Number(pos as f64)]))
}
