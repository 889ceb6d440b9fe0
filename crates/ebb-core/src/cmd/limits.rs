//! The limits family.

use crate::table::CommandSpec;

/// The limits family's commands.
pub const COMMANDS: &[CommandSpec] = &[];
