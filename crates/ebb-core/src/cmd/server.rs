//! The server family.

use crate::table::CommandSpec;

/// The server family's commands.
pub const COMMANDS: &[CommandSpec] = &[];
