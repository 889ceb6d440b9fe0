//! ebb-core: values with member deadlines, the keyspace and its expiry
//! index, the command table and every command's semantics. Pure: no
//! sockets, no files, no threads, no clock (time is passed in).

pub mod args;
pub mod cmd;
pub mod ctx;
pub mod db;
pub mod docs;
pub mod docs_table;
mod dueset;
pub mod dump;
pub mod effects;
pub mod error;
pub mod expiry;
pub mod functions;
pub mod glob;
mod idtable;
pub mod keyspecs;
mod keytable;
mod room;
pub use room::set_growth_room;
pub mod lfu;
pub mod notify;
mod prefetch;
pub mod rdb;
pub mod reply;
mod segindex;
pub mod table;
pub mod testing;
pub mod value;

pub use cmd::{execute, execute_result};
pub use ctx::Ctx;
pub use db::{Db, Entry, Store};
pub use effects::{Effects, Event};
pub use error::{CmdResult, Error};
pub use reply::Reply;
pub use table::{lookup, CommandSpec, Exec};
pub use value::Value;
