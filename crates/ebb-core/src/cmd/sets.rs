//! The sets family.

use crate::table::CommandSpec;

/// The sets family's commands.
pub const COMMANDS: &[CommandSpec] = &[];
