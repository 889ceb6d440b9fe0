//! The member_ttl family.

use crate::table::CommandSpec;

/// The member_ttl family's commands.
pub const COMMANDS: &[CommandSpec] = &[];
