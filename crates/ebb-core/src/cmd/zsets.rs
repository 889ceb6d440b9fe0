//! The zsets family.

use crate::table::CommandSpec;

/// The zsets family's commands.
pub const COMMANDS: &[CommandSpec] = &[];
