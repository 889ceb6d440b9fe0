//! The lists family.

use crate::table::CommandSpec;

/// The lists family's commands.
pub const COMMANDS: &[CommandSpec] = &[];
