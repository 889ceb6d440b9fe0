//! Sorted sets: pops, blocking pops, algebra, random members and scans.

use crate::table::CommandSpec;

mod algebra;
mod pop;
mod random;
#[cfg(test)]
mod tests;

/// Commands of this part of the sorted-set family.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("zpopmin", -2, "write fast", (1, 1, 1), "sorted-set", "Remove and return members with the lowest scores in a sorted set", pop::zpopmin),
    CommandSpec::core("zpopmax", -2, "write fast", (1, 1, 1), "sorted-set", "Remove and return members with the highest scores in a sorted set", pop::zpopmax),
    CommandSpec::core("bzpopmin", -3, "write noscript blocking fast", (1, -2, 1), "sorted-set", "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", pop::bzpopmin),
    CommandSpec::core("bzpopmax", -3, "write noscript blocking fast", (1, -2, 1), "sorted-set", "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", pop::bzpopmax),
    CommandSpec::core("zmpop", -4, "write movablekeys", (0, 0, 0), "sorted-set", "Remove and return members with scores in a sorted set", pop::zmpop).with_keys(zmpop_keys),
    CommandSpec::core("bzmpop", -5, "write blocking movablekeys", (0, 0, 0), "sorted-set", "Remove and return members with scores in a sorted set or block until one is available", pop::bzmpop).with_keys(bzmpop_keys),
    CommandSpec::core("zunion", -3, "readonly movablekeys", (0, 0, 0), "sorted-set", "Add multiple sorted sets", algebra::zunion).with_keys(numkeys_first_keys),
    CommandSpec::core("zinter", -3, "readonly movablekeys", (0, 0, 0), "sorted-set", "Intersect multiple sorted sets", algebra::zinter).with_keys(numkeys_first_keys),
    CommandSpec::core("zdiff", -3, "readonly movablekeys", (0, 0, 0), "sorted-set", "Subtract multiple sorted sets", algebra::zdiff).with_keys(numkeys_first_keys),
    CommandSpec::core("zunionstore", -4, "write denyoom movablekeys", (1, 1, 1), "sorted-set", "Add multiple sorted sets and store the resulting sorted set in a new key", algebra::zunionstore).with_keys(store_keys),
    CommandSpec::core("zinterstore", -4, "write denyoom movablekeys", (1, 1, 1), "sorted-set", "Intersect multiple sorted sets and store the resulting sorted set in a new key", algebra::zinterstore).with_keys(store_keys),
    CommandSpec::core("zdiffstore", -4, "write denyoom movablekeys", (1, 1, 1), "sorted-set", "Subtract multiple sorted sets and store the resulting sorted set in a new key", algebra::zdiffstore).with_keys(store_keys),
    CommandSpec::core("zintercard", -3, "readonly movablekeys", (0, 0, 0), "sorted-set", "Intersect multiple sorted sets and return the cardinality of the result", algebra::zintercard).with_keys(numkeys_first_keys),
    CommandSpec::core("zrandmember", -2, "readonly", (1, 1, 1), "sorted-set", "Get one or multiple random elements from a sorted set", random::zrandmember),
    CommandSpec::core("zscan", -3, "readonly", (1, 1, 1), "sorted-set", "Incrementally iterate sorted sets elements and associated scores", random::zscan),
];

/// Keys of `ZMPOP numkeys key…`.
fn zmpop_keys(argv: &[&[u8]]) -> Vec<usize> {
    algebra::positions(argv, 1)
}

/// Keys of `BZMPOP timeout numkeys key…`.
fn bzmpop_keys(argv: &[&[u8]]) -> Vec<usize> {
    let mut v = algebra::positions(argv, 2);
    // Position 1 is the timeout, not a key.
    v.retain(|&i| i != 1);
    v
}

/// Keys of `ZUNION|ZINTER|ZDIFF|ZINTERCARD numkeys key…`.
fn numkeys_first_keys(argv: &[&[u8]]) -> Vec<usize> {
    algebra::positions(argv, 1)
}

/// Keys of `Z*STORE destination numkeys key…`, destination first.
fn store_keys(argv: &[&[u8]]) -> Vec<usize> {
    algebra::positions(argv, 2)
}

/// Whether Redis would hold `z` as a listpack (few and short members),
/// which ZSCAN returns whole.
fn fits_listpack(z: &crate::value::ZSetValue, cfg: &crate::db::CoreConfig) -> bool {
    z.is_compact(cfg.zset_max_listpack_entries, cfg.zset_max_listpack_value)
}
