//! Lists.

use bytes::Bytes;
use std::collections::VecDeque;

/// A list value.
pub type ListValue = VecDeque<Bytes>;
