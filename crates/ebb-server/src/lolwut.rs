//! LOLWUT: computer art and the server's version, as Redis 7.0 draws it.
//!
//! Redis 7.0 picks the piece by version: with no `VERSION` argument (or a
//! version other than 5 and 6) only the version line; `VERSION 5` Georg
//! Nees's "Schotter" in Braille dots, `VERSION 6` a city skyline in the
//! terminal's four greys. Both pieces are random, as in Redis, so only
//! their shape (size, characters, closing line) is comparable.

use ebb_core::args::parse_i64;
use ebb_core::{Error, Reply};
use rand::Rng;

use crate::admin::eq;
use crate::info::REDIS_VERSION;

/// `LOLWUT [VERSION version] [argument …]`: the arguments after the
/// version are the piece's own (`columns squares-per-row squares-per-col`
/// for 5, `columns rows` for 6); without `VERSION` they are ignored.
pub fn lolwut(argv: &[&[u8]]) -> Reply {
    let mut args = &argv[1..];
    let mut version: Option<i64> = None;
    if argv.len() >= 3 && eq(argv[1], "version") {
        match parse_i64(argv[2]) {
            Some(v) => version = Some(v),
            None => return Error::NotInteger.into(),
        }
        args = &argv[3..];
    }
    // Redis prints the number as an unsigned 32-bit `<n>.0.0` and looks at
    // its first characters: 5 and 6 have pieces, anything else (a
    // negative number wraps to a large one) gets the version line.
    match version.map(|v| v as u32) {
        Some(5) => schotter(args),
        Some(6) => skyline(args),
        _ => Reply::Verbatim(format!("Redis ver. {REDIS_VERSION}\n").into()),
    }
}

/// The piece's numeric arguments, in order, each Redis's integer or its
/// error; missing ones keep their defaults.
fn numbers<const N: usize>(args: &[&[u8]], mut vals: [i64; N]) -> Result<[i64; N], Reply> {
    for (slot, arg) in vals.iter_mut().zip(args) {
        *slot = parse_i64(arg).ok_or_else(|| Reply::from(Error::NotInteger))?;
    }
    Ok(vals)
}

/// C's `rand()`: 0 to 2^31 - 1.
fn crand(rng: &mut impl Rng) -> i32 {
    (rng.gen::<u32>() >> 1) as i32
}

/// A grid of pixels, each a colour (0 to 3); writes outside are ignored and
/// reads outside give 0.
struct Canvas {
    width: i32,
    height: i32,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: i32, height: i32, colour: u8) -> Canvas {
        let size = width.max(0) as usize * height.max(0) as usize;
        Canvas {
            width,
            height,
            pixels: vec![colour; size],
        }
    }

    fn inside(&self, x: i32, y: i32) -> bool {
        x >= 0 && x < self.width && y >= 0 && y < self.height
    }

    fn set(&mut self, x: i32, y: i32, colour: u8) {
        if self.inside(x, y) {
            self.pixels[(x + y * self.width) as usize] = colour;
        }
    }

    fn get(&self, x: i32, y: i32) -> u8 {
        if self.inside(x, y) {
            self.pixels[(x + y * self.width) as usize]
        } else {
            0
        }
    }

    /// Bresenham's line from (x1, y1) to (x2, y2).
    fn line(&mut self, (mut x1, mut y1): (i32, i32), (x2, y2): (i32, i32), colour: u8) {
        let (dx, dy) = ((x2 - x1).abs(), (y2 - y1).abs());
        let (sx, sy) = (if x1 < x2 { 1 } else { -1 }, if y1 < y2 { 1 } else { -1 });
        let mut err = dx - dy;
        loop {
            self.set(x1, y1, colour);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// A square of side `side` centred on (x, y), turned by `angle`
    /// radians: its corners lie on the circle through them, a quarter
    /// turn apart.
    fn square(&mut self, x: i32, y: i32, side: f32, angle: f32, colour: u8) {
        let radius = (side / std::f32::consts::SQRT_2).round() as f64;
        let mut k = std::f32::consts::FRAC_PI_4 + angle;
        let mut corners = [(0, 0); 4];
        for c in &mut corners {
            let kk = k as f64;
            *c = (
                (kk.sin() * radius + x as f64).round() as i32,
                (kk.cos() * radius + y as f64).round() as i32,
            );
            k += std::f32::consts::FRAC_PI_2;
        }
        for j in 0..4 {
            self.line(corners[j], corners[(j + 1) % 4], colour);
        }
    }
}

/// Version 5: rows of squares, more and more displaced going down.
fn schotter(args: &[&[u8]]) -> Reply {
    let [cols, per_row, per_col] = match numbers(args, [66, 8, 12]) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let cols = cols.clamp(1, 1000) as i32;
    let per_row = per_row.clamp(1, 200) as i32;
    let per_col = per_col.clamp(1, 200) as i32;
    let width = cols * 2;
    let padding = if width > 4 { 2 } else { 0 };
    let side = (width - padding * 2) as f32 / per_row as f32;
    let height = (side * per_col as f32 + (padding * 2) as f32) as i32;
    let mut canvas = Canvas::new(width, height, 0);
    let mut rng = rand::thread_rng();
    for y in 0..per_col {
        for x in 0..per_row {
            let mut sx = (x as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut sy = (y as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut angle = 0.0f32;
            if y > 1 {
                let mut r = [0.0f32; 3];
                for v in &mut r {
                    *v = crand(&mut rng) as f32 / i32::MAX as f32 / per_col as f32 * y as f32;
                }
                for v in &mut r {
                    if crand(&mut rng) % 2 == 1 {
                        *v = -*v;
                    }
                }
                angle = r[0];
                sx = (sx as f32 + r[1] * side / 3.0) as i32;
                sy = (sy as f32 + r[2] * side / 3.0) as i32;
            }
            canvas.square(sx, sy, side, angle, 1);
        }
    }
    let mut text = braille(&canvas);
    text.extend_from_slice(b"\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ");
    text.extend_from_slice(REDIS_VERSION.as_bytes());
    text.push(b'\n');
    Reply::Verbatim(text.into())
}

/// The canvas as Braille characters, each two pixels wide and four tall.
fn braille(canvas: &Canvas) -> Vec<u8> {
    // Bit of each pixel of the 2x4 cell in the character's code.
    const DOTS: [(i32, i32, u32); 8] = [
        (0, 0, 0),
        (0, 1, 1),
        (0, 2, 2),
        (1, 0, 3),
        (1, 1, 4),
        (1, 2, 5),
        (0, 3, 6),
        (1, 3, 7),
    ];
    let mut text = Vec::new();
    let mut y = 0;
    while y < canvas.height {
        let mut x = 0;
        while x < canvas.width {
            let mut bits = 0u32;
            for (dx, dy, bit) in DOTS {
                if canvas.get(x + dx, y + dy) != 0 {
                    bits |= 1 << bit;
                }
            }
            let ch = char::from_u32(0x2800 + bits).unwrap_or(' ');
            let mut buf = [0u8; 4];
            text.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            x += 2;
        }
        if y != canvas.height - 1 {
            text.push(b'\n');
        }
        y += 4;
    }
    text
}

/// One building of the skyline.
struct Building {
    xoff: i32,
    width: i32,
    height: i32,
    windows: bool,
    colour: u8,
}

/// Draws a building standing on the canvas's bottom row, its roof two
/// pixels narrower on each side, with windows of the other greys.
fn building(canvas: &mut Canvas, b: &Building, rng: &mut impl Rng) {
    let start = canvas.height - 1;
    let end = start - b.height + 1;
    let mut y = start;
    while y >= end {
        for x in b.xoff..b.xoff + b.width {
            if y == end && (x <= b.xoff + 1 || x >= b.xoff + b.width - 2) {
                continue;
            }
            let mut colour = b.colour;
            if b.windows
                && x > b.xoff + 1
                && x < b.xoff + b.width - 2
                && y > end + 1
                && y < start - 1
            {
                let relx = x - (b.xoff + 1);
                let rely = y - (end + 1);
                // Windows two pixels wide and one tall (a character is
                // about twice as tall as wide).
                if (relx / 2) % 2 != 0 && rely % 2 != 0 {
                    loop {
                        colour = (1 + crand(rng) % 2) as u8;
                        if colour != b.colour {
                            break;
                        }
                    }
                    if relx % 2 != 0 {
                        colour = canvas.get(x - 1, y);
                    }
                }
            }
            canvas.set(x, y, colour);
        }
        y -= 1;
    }
}

/// Version 6: two rows of plain buildings in the greys behind a row of
/// black buildings with windows.
fn skyline(args: &[&[u8]]) -> Reply {
    let [cols, rows] = match numbers(args, [80, 20]) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let (cols, rows) = (cols.clamp(1, 1000) as i32, rows.clamp(1, 1000) as i32);
    let mut canvas = Canvas::new(cols, rows, 3);
    let mut rng = rand::thread_rng();
    let h = canvas.height;
    for colour in [2u8, 1] {
        let mut offset = -10;
        while offset < canvas.width {
            offset += crand(&mut rng) % 8;
            let width = 10 + crand(&mut rng) % 9;
            let height = if colour == 2 {
                h / 2 + (crand(&mut rng) % h) / 2
            } else {
                h / 2 + (crand(&mut rng) % h) / 3
            };
            let b = Building {
                xoff: offset,
                width,
                height,
                windows: false,
                colour,
            };
            building(&mut canvas, &b, &mut rng);
            offset += if colour == 2 { width / 2 } else { width + 1 };
        }
    }
    let mut offset = -10;
    while offset < canvas.width {
        offset += crand(&mut rng) % 8;
        let mut width = 5 + crand(&mut rng) % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let height = h / 3 + (crand(&mut rng) % h) / 2;
        let b = Building {
            xoff: offset,
            width,
            height,
            windows: true,
            colour: 0,
        };
        building(&mut canvas, &b, &mut rng);
        offset += width + 5;
    }
    let mut text = Vec::new();
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            // Foreground and background both set, for terminals that
            // differ in how they show either alone.
            let escape: &[u8] = match canvas.get(x, y) {
                1 => b"0;90;100m",
                2 => b"0;37;47m",
                3 => b"0;97;107m",
                _ => b"0;30;40m",
            };
            text.extend_from_slice(b"\x1b[");
            text.extend_from_slice(escape);
            text.extend_from_slice(b" \x1b[0m");
        }
        if y != canvas.height - 1 {
            text.push(b'\n');
        }
    }
    text.extend_from_slice(
        b"\nDedicated to the 8 bit game developers of past and present.\n\
          Original 8 bit image from Plaguemon by hikikomori. Redis ver. ",
    );
    text.extend_from_slice(REDIS_VERSION.as_bytes());
    text.push(b'\n');
    Reply::Verbatim(text.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: Reply) -> String {
        match r {
            Reply::Verbatim(b) => String::from_utf8(b.to_vec()).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn version_line_unless_five_or_six() {
        let want = format!("Redis ver. {REDIS_VERSION}\n");
        assert_eq!(text(lolwut(&[b"lolwut"])), want);
        assert_eq!(text(lolwut(&[b"lolwut", b"5", b"6", b"7"])), want);
        assert_eq!(text(lolwut(&[b"lolwut", b"version", b"7"])), want);
        assert_eq!(text(lolwut(&[b"lolwut", b"VERSION", b"-1"])), want);
        assert_eq!(text(lolwut(&[b"lolwut", b"version"])), want);
        assert!(matches!(
            lolwut(&[b"lolwut", b"version", b"x"]),
            Reply::Error(_)
        ));
    }

    #[test]
    fn schotter_shape() {
        let t = text(lolwut(&[b"lolwut", b"version", b"5"]));
        let lines: Vec<&str> = t.lines().collect();
        // 66 columns: 33 Braille characters a row; 132 x 194 pixels.
        assert_eq!(lines[0].chars().count(), 66);
        assert!(t.ends_with(&format!("1968. Redis ver. {REDIS_VERSION}\n")));
        assert!(matches!(
            lolwut(&[b"lolwut", b"version", b"5", b"1", b"x"]),
            Reply::Error(_)
        ));
        let tiny = text(lolwut(&[b"lolwut", b"version", b"5", b"1", b"1", b"1"]));
        assert_eq!(tiny.lines().next().map(|l| l.chars().count()), Some(1));
    }

    #[test]
    fn skyline_shape() {
        let t = text(lolwut(&[b"lolwut", b"version", b"6", b"10", b"3"]));
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0].matches("\x1b[0m").count(), 10);
        assert!(lines[4].starts_with("Original 8 bit image"));
    }
}
