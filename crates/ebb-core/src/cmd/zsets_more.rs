//! Sorted sets: pops, blocking pops, algebra, random members and scans.

use crate::table::CommandSpec;

/// Commands of this part of the sorted-set family.
pub const COMMANDS: &[CommandSpec] = &[];
