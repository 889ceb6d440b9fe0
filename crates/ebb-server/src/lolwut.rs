//! LOLWUT: a piece of computer art and the version, as Redis 7.0 answers
//! it. `LOLWUT [VERSION v] [args…]`: version 5 draws Georg Nees's
//! "Schotter" (rows of squares that tumble more the lower they are) in
//! Braille characters, version 6 a city skyline in four terminal grays;
//! any other version, and no VERSION at all, answers the version line
//! alone (Redis 7.0 has no drawing of its own).

use ebb_core::args::parse_i64;
use ebb_core::{Error, Reply};
use rand::Rng;

use crate::info::REDIS_VERSION;

/// A grid of pixels, each a color number (0 is the background of
/// version 5, black in version 6). Drawing outside it is ignored.
struct Canvas {
    width: i64,
    height: i64,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: i64, height: i64, color: u8) -> Canvas {
        let (w, h) = (width.max(0), height.max(0));
        Canvas {
            width: w,
            height: h,
            pixels: vec![color; (w * h) as usize],
        }
    }

    fn index(&self, x: i64, y: i64) -> Option<usize> {
        (x >= 0 && y >= 0 && x < self.width && y < self.height)
            .then(|| (x + y * self.width) as usize)
    }

    fn set(&mut self, x: i64, y: i64, color: u8) {
        if let Some(i) = self.index(x, y) {
            self.pixels[i] = color;
        }
    }

    fn get(&self, x: i64, y: i64) -> u8 {
        self.index(x, y).map_or(0, |i| self.pixels[i])
    }

    /// A straight line between two points, every step one pixel.
    fn line(&mut self, (mut x, mut y): (i64, i64), (x2, y2): (i64, i64), color: u8) {
        let (dx, dy) = ((x2 - x).abs(), (y2 - y).abs());
        let (step_x, step_y) = (if x < x2 { 1 } else { -1 }, if y < y2 { 1 } else { -1 });
        let mut err = dx - dy;
        loop {
            self.set(x, y, color);
            if x == x2 && y == y2 {
                return;
            }
            let twice = err * 2;
            if twice > -dy {
                err -= dy;
                x += step_x;
            }
            if twice < dx {
                err += dx;
                y += step_y;
            }
        }
    }

    /// The outline of a square of side `side` centred on (x, y), turned
    /// by `angle` radians: its corners lie on a circle, a quarter turn
    /// apart, starting from the diagonal.
    fn square(&mut self, x: i64, y: i64, side: f32, angle: f32, color: u8) {
        let radius = (side / std::f32::consts::SQRT_2).round();
        let corners: Vec<(i64, i64)> = (0..4)
            .map(|j| {
                let k =
                    std::f32::consts::FRAC_PI_4 + angle + j as f32 * std::f32::consts::FRAC_PI_2;
                (
                    (k.sin() * radius + x as f32).round() as i64,
                    (k.cos() * radius + y as f32).round() as i64,
                )
            })
            .collect();
        for j in 0..4 {
            self.line(corners[j], corners[(j + 1) % 4], color);
        }
    }
}

/// LOLWUT with its arguments (`argv[0]` is the command name).
pub fn lolwut(argv: &[&[u8]]) -> Reply {
    let mut args = &argv[1..];
    let mut version = None;
    if args.len() >= 2 && args[0].eq_ignore_ascii_case(b"version") {
        let Some(v) = parse_i64(args[1]) else {
            return Error::NotInteger.into();
        };
        // Redis reads the number into an unsigned 32-bit field.
        version = Some(v as u32);
        args = &args[2..];
    }
    let text = match version {
        Some(5) => match numbers(args, [66, 8, 12]) {
            Ok([cols, per_row, per_col]) => schotter(cols, per_row, per_col),
            Err(e) => return e.into(),
        },
        Some(6) => match numbers(args, [80, 20]) {
            Ok([cols, rows]) => skyline(cols, rows),
            Err(e) => return e.into(),
        },
        _ => format!("Redis ver. {REDIS_VERSION}\n"),
    };
    Reply::Verbatim(text.into())
}

/// The optional integer arguments, each defaulting to its place in
/// `defaults`; arguments past them are ignored, as Redis does.
fn numbers<const N: usize>(args: &[&[u8]], defaults: [i64; N]) -> Result<[i64; N], Error> {
    let mut out = defaults;
    for (slot, arg) in out.iter_mut().zip(args) {
        *slot = parse_i64(arg).ok_or(Error::NotInteger)?;
    }
    Ok(out)
}

/// Version 5: `cols` terminal columns (1–1000), squares per row and per
/// column (1–200 each).
fn schotter(cols: i64, per_row: i64, per_col: i64) -> String {
    let cols = cols.clamp(1, 1000);
    let (per_row, per_col) = (per_row.clamp(1, 200), per_col.clamp(1, 200));
    let width = cols * 2;
    let padding = if width > 4 { 2 } else { 0 };
    let side = (width - padding * 2) as f32 / per_row as f32;
    let height = (side * per_col as f32) as i64 + padding * 2;
    let mut canvas = Canvas::new(width, height, 0);
    let mut rng = rand::thread_rng();
    for row in 0..per_col {
        for col in 0..per_row {
            let mut x = (col as f32 * side + side / 2.0) as i64 + padding;
            let mut y = (row as f32 * side + side / 2.0) as i64 + padding;
            let mut angle = 0.0;
            if row > 1 {
                // The lower the row, the larger the disorder.
                let mut shake = || {
                    let r = rng.gen::<f32>() / per_col as f32 * row as f32;
                    if rng.gen::<bool>() {
                        -r
                    } else {
                        r
                    }
                };
                angle = shake();
                x = (x as f32 + shake() * side / 3.0) as i64;
                y = (y as f32 + shake() * side / 3.0) as i64;
            }
            canvas.square(x, y, side, angle, 1);
        }
    }
    let mut text = braille(&canvas);
    text.push_str("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ");
    text.push_str(REDIS_VERSION);
    text.push('\n');
    text
}

/// The canvas in Braille characters, each one 2 × 4 pixels, one line per
/// four rows of pixels.
fn braille(canvas: &Canvas) -> String {
    // Which dot of the character each pixel of the 2 × 4 cell lights,
    // (dx, dy, bit).
    const DOTS: [(i64, i64, u32); 8] = [
        (0, 0, 0),
        (0, 1, 1),
        (0, 2, 2),
        (1, 0, 3),
        (1, 1, 4),
        (1, 2, 5),
        (0, 3, 6),
        (1, 3, 7),
    ];
    let mut text = String::new();
    for y in (0..canvas.height).step_by(4) {
        for x in (0..canvas.width).step_by(2) {
            let bits = DOTS
                .iter()
                .filter(|(dx, dy, _)| canvas.get(x + dx, y + dy) != 0)
                .fold(0, |acc, (_, _, bit)| acc | 1 << bit);
            text.push(char::from_u32(0x2800 + bits).unwrap_or(' '));
        }
        if y != canvas.height - 1 {
            text.push('\n');
        }
    }
    text
}

/// One building of the skyline: where it starts, its size and color, and
/// whether it has lit windows.
struct Building {
    left: i64,
    width: i64,
    height: i64,
    windows: bool,
    color: u8,
}

/// Version 6: `cols` × `rows` terminal cells (1–1000 each).
fn skyline(cols: i64, rows: i64) -> String {
    let (cols, rows) = (cols.clamp(1, 1000), rows.clamp(1, 1000));
    let mut canvas = Canvas::new(cols, rows, 3);
    let mut rng = rand::thread_rng();
    let h = canvas.height;
    // Two rows of plain buildings behind, the lighter gray furthest.
    for color in [2u8, 1] {
        let mut offset = -10;
        while offset < canvas.width {
            offset += rng.gen_range(0..8);
            let width = 10 + rng.gen_range(0..9);
            let height = if color == 2 {
                h / 2 + rng.gen_range(0..h.max(1)) / 2
            } else {
                h / 2 + rng.gen_range(0..h.max(1)) / 3
            };
            let b = Building {
                left: offset,
                width,
                height,
                windows: false,
                color,
            };
            building(&mut canvas, &b, &mut rng);
            offset += if color == 2 { width / 2 } else { width + 1 };
        }
    }
    // Black buildings in front, with windows.
    let mut offset = -10;
    while offset < canvas.width {
        offset += rng.gen_range(0..8);
        let mut width = 5 + rng.gen_range(0..14);
        if width % 4 != 0 {
            width += width % 3;
        }
        let height = h / 3 + rng.gen_range(0..h.max(1)) / 2;
        let b = Building {
            left: offset,
            width,
            height,
            windows: true,
            color: 0,
        };
        building(&mut canvas, &b, &mut rng);
        offset += width + 5;
    }
    let mut text = String::new();
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            // Foreground and background of the cell, for a steadier look
            // across terminals.
            let code = match canvas.get(x, y) {
                1 => "0;90;100m",
                2 => "0;37;47m",
                3 => "0;97;107m",
                _ => "0;30;40m",
            };
            text.push_str("\x1b[");
            text.push_str(code);
            text.push_str(" \x1b[0m");
        }
        if y != canvas.height - 1 {
            text.push('\n');
        }
    }
    text.push_str(
        "\nDedicated to the 8 bit game developers of past and present.\n\
         Original 8 bit image from Plaguemon by hikikomori. Redis ver. ",
    );
    text.push_str(REDIS_VERSION);
    text.push('\n');
    text
}

/// Draws one building standing on the bottom row: the roof two pixels
/// narrower on each side, windows two pixels wide and one tall on every
/// other row, each one of the two grays other than the wall's.
fn building(canvas: &mut Canvas, b: &Building, rng: &mut impl Rng) {
    let bottom = canvas.height - 1;
    let top = bottom - b.height + 1;
    let right = b.left + b.width;
    let mut y = bottom;
    while y >= top {
        for x in b.left..right {
            if y == top && (x <= b.left + 1 || x >= right - 2) {
                continue;
            }
            let mut color = b.color;
            let inside = x > b.left + 1 && x < right - 2 && y > top + 1 && y < bottom - 1;
            if b.windows && inside {
                let (rel_x, rel_y) = (x - (b.left + 1), y - (top + 1));
                if (rel_x / 2) % 2 != 0 && rel_y % 2 != 0 {
                    color = loop {
                        let c = 1 + rng.gen_range(0..2u8);
                        if c != b.color {
                            break c;
                        }
                    };
                    // The two pixels of one window share its color.
                    if rel_x % 2 != 0 {
                        color = canvas.get(x - 1, y);
                    }
                }
            }
            canvas.set(x, y, color);
        }
        y -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(argv: &[&str]) -> String {
        let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
        match lolwut(&argv) {
            Reply::Verbatim(t) => String::from_utf8_lossy(&t).into_owned(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn versions_and_defaults() {
        let line = format!("Redis ver. {REDIS_VERSION}\n");
        for argv in [
            &["lolwut"][..],
            &["lolwut", "version"],
            &["lolwut", "foo", "bar"],
            &["lolwut", "version", "7"],
            &["lolwut", "version", "-1"],
            &["lolwut", "version", "4"],
        ] {
            assert_eq!(text(argv), line, "{argv:?}");
        }
        // A version read as unsigned 32 bits: 2^32 + 5 is 5.
        assert!(text(&["lolwut", "version", "4294967301", "4", "2", "2"]).contains("schotter"));
        let argv: Vec<&[u8]> = vec![b"lolwut", b"version", b"x"];
        assert_eq!(lolwut(&argv), Error::NotInteger.into());
        let argv: Vec<&[u8]> = vec![b"lolwut", b"VERSION", b"5", b"1.5"];
        assert_eq!(lolwut(&argv), Error::NotInteger.into());
    }

    #[test]
    fn schotter_has_the_requested_size() {
        // 4 columns: two rows of two squares, no disorder in the first two rows.
        let t = text(&["lolwut", "version", "5", "4", "2", "2"]);
        let (art, caption) = t.split_once("\n\n").unwrap_or_default();
        assert_eq!(art, "⠀⡤⡤⡄\n⠀⠯⠯⠇");
        assert_eq!(
            caption,
            format!("Georg Nees - schotter, plotter on paper, 1968. Redis ver. {REDIS_VERSION}\n")
        );
        let t = text(&["lolwut", "version", "5"]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines.len() > 20);
        assert!(lines
            .iter()
            .take(lines.len() - 2)
            .all(|l| l.chars().count() == 66));
    }

    #[test]
    fn skyline_has_the_requested_size() {
        let t = text(&["lolwut", "VERSION", "6", "30", "10"]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 12);
        assert!(lines[..10]
            .iter()
            .all(|l| l.matches("\x1b[0m").count() == 30));
        assert!(t.ends_with(&format!("hikikomori. Redis ver. {REDIS_VERSION}\n")));
        // Extremes are clamped, never refused.
        assert!(text(&["lolwut", "version", "6", "0", "-5"]).contains("Plaguemon"));
        assert!(text(&["lolwut", "version", "5", "-3", "0", "100000"]).contains("schotter"));
    }
}
