//! The keys family.

use crate::table::CommandSpec;

/// The keys family's commands.
pub const COMMANDS: &[CommandSpec] = &[];
