//! The `cmsgpack` library of Redis's Lua environment: `pack`, `unpack`,
//! `unpack_one` and `unpack_limit`, with the encodings Redis's bundled
//! lua-cmsgpack chooses (smallest integer form, float32 when exact, str8
//! for 32–255 bytes, tables as arrays when their keys are exactly 1..n,
//! nesting past 16 levels packed as nil).

use mlua::{Lua, MultiValue, Table, Value};

use super::libs::{check_number, check_string, set_multi};

/// Tables nested deeper than this are packed as nil (so a table that
/// refers to itself packs to a finite copy).
const MAX_NESTING: usize = 16;

/// The deepest nesting unpack decodes (deeper input would overflow the
/// thread's stack); past it unpack fails with the error Redis gives when
/// its Lua stack runs out on deep input.
const MAX_DECODE_NESTING: usize = 1000;
const TOO_DEEP: &str =
    "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)";

/// Lua's own error for a map with a nil key (raised by the table store,
/// so it carries no script position).
const NIL_INDEX: &str = "table index is nil";

/// The `cmsgpack` table.
pub fn cmsgpack(lua: &Lua, state: &Table) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let add = |name: &str, f: fn(&Lua, MultiValue) -> mlua::Result<MultiValue>| {
        set_multi(lua, &t, state, name, &[NIL_INDEX], f)
    };
    add("pack", pack)?;
    add("unpack", |lua, a| {
        let s = input(&a, "unpack")?;
        unpack(lua, &s, 0, 0)
    })?;
    add("unpack_one", |lua, a| {
        let s = input(&a, "unpack_one")?;
        let offset = opt_int(&a, 1, "unpack_one")?;
        unpack(lua, &s, 1, offset)
    })?;
    add("unpack_limit", |lua, a| {
        let s = input(&a, "unpack_limit")?;
        let limit = check_number(a.get(1), 2, "unpack_limit")? as i64;
        let offset = opt_int(&a, 2, "unpack_limit")?;
        unpack(lua, &s, limit, offset)
    })?;
    t.raw_set("_NAME", "cmsgpack")?;
    t.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(t)
}

/// The string to decode (argument 1).
fn input(a: &MultiValue, func: &str) -> mlua::Result<Vec<u8>> {
    check_string(a.front(), 1, func)
}

fn int_arg(v: &Value, n: usize, func: &str) -> mlua::Result<i64> {
    Ok(check_number(Some(v), n, func)? as i64)
}

/// An optional integer argument at `i` (0 when absent or nil).
fn opt_int(a: &MultiValue, i: usize, func: &str) -> mlua::Result<i64> {
    match a.get(i) {
        None | Some(Value::Nil) => Ok(0),
        Some(v) => int_arg(v, i + 1, func),
    }
}

// --- packing ----------------------------------------------------------------

fn pack(lua: &Lua, a: MultiValue) -> mlua::Result<MultiValue> {
    if a.is_empty() {
        return Err(mlua::Error::RuntimeError(
            "bad argument #0 to 'pack' (MessagePack pack needs input.)".into(),
        ));
    }
    let mut out = Vec::new();
    for v in a.iter() {
        encode(&mut out, v, 0)?;
    }
    Ok(MultiValue::from_vec(vec![Value::String(
        lua.create_string(out)?,
    )]))
}

/// Whether `n` is a whole number that an `int64_t` holds exactly.
fn int64_equivalent(n: f64) -> bool {
    n.is_finite()
        && n == n.trunc()
        && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&n)
}

fn encode(out: &mut Vec<u8>, v: &Value, level: usize) -> mlua::Result<()> {
    match v {
        Value::String(s) => encode_bytes(out, &s.as_bytes()),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => encode_int(out, *i),
        Value::Number(n) if int64_equivalent(*n) => encode_int(out, *n as i64),
        Value::Number(n) => encode_double(out, *n),
        Value::Table(t) if level < MAX_NESTING => encode_table(out, t, level)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

fn encode_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        match n {
            0..=127 => out.push(n as u8),
            128..=0xff => out.extend_from_slice(&[0xcc, n as u8]),
            0x100..=0xffff => {
                out.push(0xcd);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                out.push(0xce);
                out.extend_from_slice(&(n as u32).to_be_bytes());
            }
            _ => {
                out.push(0xcf);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_double(out: &mut Vec<u8>, d: f64) {
    let f = d as f32;
    if f as f64 == d {
        out.push(0xca);
        out.extend_from_slice(&f.to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&d.to_be_bytes());
    }
}

fn encode_bytes(out: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if n < 32 {
        out.push(0xa0 | n as u8);
    } else if n <= 0xff {
        out.extend_from_slice(&[0xd9, n as u8]);
    } else if n <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
    out.extend_from_slice(s);
}

/// A header for `n` items: the fixed form below 16, then 16 and 32 bits.
fn encode_len(out: &mut Vec<u8>, n: usize, fix: u8, w16: u8, w32: u8) {
    if n <= 15 {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(w16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(w32);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// The array length when the table's keys are exactly 1..n (an empty table
/// is an empty array).
fn as_array(t: &Table) -> mlua::Result<Option<usize>> {
    let (mut count, mut max) = (0usize, 0f64);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        let n = match &k {
            Value::Integer(i) => *i as f64,
            Value::Number(n) => *n,
            _ => return Ok(None),
        };
        if n <= 0.0 || n != n.trunc() || !n.is_finite() {
            return Ok(None);
        }
        max = max.max(n);
        count += 1;
    }
    Ok((max == count as f64).then_some(count))
}

fn encode_table(out: &mut Vec<u8>, t: &Table, level: usize) -> mlua::Result<()> {
    if let Some(len) = as_array(t)? {
        encode_len(out, len, 0x90, 0xdc, 0xdd);
        for i in 1..=len {
            encode(out, &t.get::<Value>(i)?, level + 1)?;
        }
        return Ok(());
    }
    // Two walks, as lua-cmsgpack does: count, then write (holding every
    // pair at once would take a Lua reference each).
    let mut n = 0usize;
    for pair in t.pairs::<Value, Value>() {
        pair?;
        n += 1;
    }
    encode_len(out, n, 0x80, 0xde, 0xdf);
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        encode(out, &k, level + 1)?;
        encode(out, &v, level + 1)?;
    }
    Ok(())
}

// --- unpacking --------------------------------------------------------------

/// Why decoding stopped.
enum Stop {
    Eof,
    BadFormat,
    Lua(mlua::Error),
}

impl From<mlua::Error> for Stop {
    fn from(e: mlua::Error) -> Stop {
        Stop::Lua(e)
    }
}

/// Decodes up to `limit` values (all with 0) from `offset`; unless
/// decoding everything (no limit, no offset), the next offset comes first
/// (-1 once the input is used up).
fn unpack(lua: &Lua, s: &[u8], limit: i64, offset: i64) -> mlua::Result<MultiValue> {
    let decode_all = limit == 0 && offset == 0;
    if offset < 0 || limit < 0 {
        return Err(mlua::Error::RuntimeError(format!(
            "Invalid request to unpack with offset of {offset} and limit of {}.",
            s.len()
        )));
    }
    if offset as u64 > s.len() as u64 {
        return Err(mlua::Error::RuntimeError(format!(
            "Start offset {offset} greater than input length {}.",
            s.len()
        )));
    }
    let limit = if decode_all { i64::MAX } else { limit };
    let mut d = Decoder {
        s,
        i: offset as usize,
        depth: 0,
    };
    let mut values = Vec::new();
    while d.i < s.len() && (values.len() as i64) < limit {
        match d.value(lua) {
            Ok(v) => values.push(v),
            Err(Stop::Eof) => {
                return Err(mlua::Error::RuntimeError("Missing bytes in input.".into()))
            }
            Err(Stop::BadFormat) => {
                return Err(mlua::Error::RuntimeError(
                    "Bad data format in input.".into(),
                ))
            }
            Err(Stop::Lua(e)) => return Err(e),
        }
    }
    if !decode_all {
        let next = if d.i >= s.len() { -1 } else { d.i as i64 };
        values.insert(0, Value::Number(next as f64));
    }
    Ok(MultiValue::from_vec(values))
}

struct Decoder<'a> {
    s: &'a [u8],
    i: usize,
    /// Arrays and maps open around the current value.
    depth: usize,
}

impl Decoder<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Stop> {
        let end = self.i.checked_add(n).ok_or(Stop::Eof)?;
        let b = self.s.get(self.i..end).ok_or(Stop::Eof)?;
        self.i = end;
        Ok(b)
    }

    fn be(&mut self, n: usize) -> Result<u64, Stop> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | b as u64))
    }

    fn value(&mut self, lua: &Lua) -> Result<Value, Stop> {
        let tag = *self.s.get(self.i).ok_or(Stop::Eof)?;
        self.i += 1;
        let num = |n: f64| Ok(Value::Number(n));
        match tag {
            0xc0 => Ok(Value::Nil),
            0xc2 => Ok(Value::Boolean(false)),
            0xc3 => Ok(Value::Boolean(true)),
            0xcc => num(self.be(1)? as f64),
            0xcd => num(self.be(2)? as f64),
            0xce => num(self.be(4)? as f64),
            // Read as a signed 64-bit integer, as Redis's library does.
            0xcf => num(self.be(8)? as i64 as f64),
            0xd0 => num(self.be(1)? as u8 as i8 as f64),
            0xd1 => num(self.be(2)? as u16 as i16 as f64),
            0xd2 => num(self.be(4)? as u32 as i32 as f64),
            0xd3 => num(self.be(8)? as i64 as f64),
            0xca => num(f32::from_bits(self.be(4)? as u32) as f64),
            0xcb => num(f64::from_bits(self.be(8)?)),
            0xd9 => self.bytes(lua, 1),
            0xda => self.bytes(lua, 2),
            0xdb => self.bytes(lua, 4),
            0xdc => {
                let n = self.be(2)? as usize;
                self.array(lua, n)
            }
            0xdd => {
                let n = self.be(4)? as usize;
                self.array(lua, n)
            }
            0xde => {
                let n = self.be(2)? as usize;
                self.map(lua, n)
            }
            0xdf => {
                let n = self.be(4)? as usize;
                self.map(lua, n)
            }
            t if t & 0x80 == 0 => num(t as f64),
            t if t & 0xe0 == 0xe0 => num(t as i8 as f64),
            t if t & 0xe0 == 0xa0 => {
                let b = self.take((t & 0x1f) as usize)?;
                Ok(Value::String(lua.create_string(b)?))
            }
            t if t & 0xf0 == 0x90 => self.array(lua, (t & 0x0f) as usize),
            t if t & 0xf0 == 0x80 => self.map(lua, (t & 0x0f) as usize),
            _ => Err(Stop::BadFormat),
        }
    }

    /// A string whose length takes `w` bytes.
    fn bytes(&mut self, lua: &Lua, w: usize) -> Result<Value, Stop> {
        let n = self.be(w)? as usize;
        let b = self.take(n)?;
        Ok(Value::String(lua.create_string(b)?))
    }

    fn nest(&mut self) -> Result<(), Stop> {
        self.depth += 1;
        if self.depth > MAX_DECODE_NESTING {
            return Err(Stop::Lua(mlua::Error::RuntimeError(TOO_DEEP.into())));
        }
        Ok(())
    }

    fn array(&mut self, lua: &Lua, n: usize) -> Result<Value, Stop> {
        self.nest()?;
        let t = lua.create_table()?;
        for j in 1..=n {
            let v = self.value(lua)?;
            t.raw_set(j, v)?;
        }
        self.depth -= 1;
        Ok(Value::Table(t))
    }

    fn map(&mut self, lua: &Lua, n: usize) -> Result<Value, Stop> {
        self.nest()?;
        let t = lua.create_table()?;
        for _ in 0..n {
            let k = self.value(lua)?;
            let v = self.value(lua)?;
            if k.is_nil() {
                return Err(Stop::Lua(mlua::Error::RuntimeError(NIL_INDEX.into())));
            }
            t.raw_set(k, v)?;
        }
        self.depth -= 1;
        Ok(Value::Table(t))
    }
}
