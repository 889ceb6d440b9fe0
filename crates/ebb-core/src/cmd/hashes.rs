//! The hashes family.

use crate::table::CommandSpec;

/// The hashes family's commands.
pub const COMMANDS: &[CommandSpec] = &[];
