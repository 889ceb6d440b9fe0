//! The one error type of ebb-core, mapped to Redis's exact error texts in
//! [`Error::text`].

use std::borrow::Cow;

/// Every error a command can reply with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// WRONGTYPE: the key holds another kind of value.
    WrongType,
    /// An argument that must be a 64-bit integer is not.
    NotInteger,
    /// An argument that must be a float is not.
    NotFloat,
    /// Generic syntax error.
    Syntax,
    /// Wrong number of arguments for the named command (lower case).
    WrongArity(String),
    /// `ERR no such key`.
    NoSuchKey,
    /// `ERR index out of range`.
    IndexOutOfRange,
    /// `ERR increment or decrement would overflow`.
    Overflow,
    /// `ERR value is out of range, must be positive`.
    MustBePositive,
    /// `ERR DB index is out of range`.
    DbIndexOutOfRange,
    /// `ERR invalid expire time in '<cmd>' command`.
    InvalidExpire(String),
    /// `ERR min or max is not a float`.
    MinMaxNotFloat,
    /// `ERR min or max not valid string range item`.
    MinMaxNotLex,
    /// `ERR resulting score is not a number (NaN)`.
    ScoreNaN,
    /// `ERR timeout is not a float or out of range`.
    TimeoutNotFloat,
    /// `ERR timeout is negative`.
    TimeoutNegative,
    /// `ERR timeout is not an integer or out of range` (a timeout in
    /// milliseconds, as WAIT takes it).
    TimeoutNotInteger,
    /// `ERR string exceeds maximum allowed size (proto-max-bulk-len)`.
    StringTooLong,
    /// Blocking command found nothing: the server parks the client on
    /// `keys` until one is ready or `timeout_ms` (0 = forever) passes, then
    /// runs the command again. Returned only when `Ctx::may_block`.
    WouldBlock {
        /// Keys to wait on.
        keys: Vec<bytes::Bytes>,
        /// Relative timeout in ms, 0 for none.
        timeout_ms: u64,
    },
    /// Any other error; the text is complete, including its prefix (`ERR`, …).
    Msg(Cow<'static, str>),
}

impl Error {
    /// An error with a literal, complete text such as `"ERR ..."`.
    pub fn msg(text: impl Into<Cow<'static, str>>) -> Error {
        Error::Msg(text.into())
    }

    /// The exact text Redis replies with, without the leading `-`.
    pub fn text(&self) -> Cow<'static, str> {
        match self {
            Error::WrongType => {
                "WRONGTYPE Operation against a key holding the wrong kind of value".into()
            }
            Error::NotInteger => "ERR value is not an integer or out of range".into(),
            Error::NotFloat => "ERR value is not a valid float".into(),
            Error::Syntax => "ERR syntax error".into(),
            Error::WrongArity(name) => {
                format!("ERR wrong number of arguments for '{name}' command").into()
            }
            Error::NoSuchKey => "ERR no such key".into(),
            Error::IndexOutOfRange => "ERR index out of range".into(),
            Error::Overflow => "ERR increment or decrement would overflow".into(),
            Error::MustBePositive => "ERR value is out of range, must be positive".into(),
            Error::DbIndexOutOfRange => "ERR DB index is out of range".into(),
            Error::InvalidExpire(cmd) => {
                format!("ERR invalid expire time in '{cmd}' command").into()
            }
            Error::MinMaxNotFloat => "ERR min or max is not a float".into(),
            Error::MinMaxNotLex => "ERR min or max not valid string range item".into(),
            Error::ScoreNaN => "ERR resulting score is not a number (NaN)".into(),
            Error::TimeoutNotFloat => "ERR timeout is not a float or out of range".into(),
            Error::TimeoutNegative => "ERR timeout is negative".into(),
            Error::TimeoutNotInteger => "ERR timeout is not an integer or out of range".into(),
            Error::StringTooLong => {
                "ERR string exceeds maximum allowed size (proto-max-bulk-len)".into()
            }
            Error::WouldBlock { .. } => "ERR blocking command cannot block here".into(),
            Error::Msg(m) => m.clone(),
        }
    }
}

/// Result of parsing or applying a command.
pub type CmdResult<T> = Result<T, Error>;

/// Redis's reply to an unknown command: the name and the start of the
/// arguments, quoted, with newlines blanked.
pub fn unknown_command<A: AsRef<[u8]>>(argv: &[A]) -> Error {
    let name = argv
        .first()
        .map(|b| lossy(b.as_ref(), 128))
        .unwrap_or_default();
    let mut args = String::new();
    for a in argv.iter().skip(1) {
        if args.len() >= 128 {
            break;
        }
        let room = 128 - args.len();
        args.push('\'');
        args.push_str(&lossy(a.as_ref(), room));
        args.push_str("' ");
    }
    let text = format!("ERR unknown command '{name}', with args beginning with: {args}");
    Error::Msg(text.replace(['\r', '\n'], " ").into())
}

/// Redis's reply to an unknown subcommand (`CONFIG FOO`).
pub fn unknown_subcommand(sub: &[u8], cmd: &str) -> Error {
    let text = format!(
        "ERR unknown subcommand '{}'. Try {} HELP.",
        lossy(sub, 128),
        cmd.to_ascii_uppercase()
    );
    Error::Msg(text.replace(['\r', '\n'], " ").into())
}

/// Redis's reply to a subcommand it knows given the wrong number of
/// arguments (or one it does not know, for some containers):
/// `unknown subcommand or wrong number of arguments for 'SUB'. Try CMD HELP.`
pub fn subcommand_syntax(sub: &[u8], cmd: &str) -> Error {
    let text = format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        lossy(sub, 128),
        cmd.to_ascii_uppercase()
    );
    Error::Msg(text.replace(['\r', '\n'], " ").into())
}

/// `b` as Redis prints an argument in a message: a C string, so up to
/// a NUL, as text.
pub fn c_text(b: &[u8]) -> String {
    lossy(b, usize::MAX)
}

/// At most `max` bytes of `b` as Redis prints it (a C string, so up to a
/// NUL), as text.
fn lossy(b: &[u8], max: usize) -> String {
    let end = crate::args::c_str(b).len().min(max);
    String::from_utf8_lossy(&b[..end]).into_owned()
}
