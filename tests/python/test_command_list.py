"""COMMAND LIST as Redis 7.0 answers it: subcommands listed as
`container|sub`, FILTERBY PATTERN matched against both kinds of names,
unknown filter types refused."""

import pytest
import redis

from conftest import raw_cmd


def names(r, *args):
    out = raw_cmd(r, "COMMAND", "LIST", *args)
    return sorted(x.decode() if isinstance(x, bytes) else x for x in out)


def test_command_list_includes_subcommands(r):
    all_names = names(r)
    assert "set" in all_names and "client|list" in all_names and "config|get" in all_names


def test_filterby_pattern_matches_commands_and_subcommands(r):
    assert names(r, "FILTERBY", "PATTERN", "set") == ["set"]
    assert names(r, "FILTERBY", "PATTERN", "SET") == ["set"]
    cfg = names(r, "FILTERBY", "PATTERN", "config*")
    assert "config" in cfg and "config|get" in cfg
    assert names(r, "FILTERBY", "PATTERN", "config|*re*") == ["config|resetstat", "config|rewrite"]
    assert "client|help" in names(r, "FILTERBY", "PATTERN", "cl*help")
    assert names(r, "FILTERBY", "PATTERN", "non_exists*") == []


def test_filterby_module_and_aclcat(r):
    assert names(r, "FILTERBY", "MODULE", "nomodule") == []
    assert names(r, "FILTERBY", "ACLCAT", "non_existing_category") == []
    assert "get" in names(r, "FILTERBY", "ACLCAT", "read")


@pytest.mark.parametrize("args", [["bad_arg"], ["FILTERBY", "bad_arg"], ["FILTERBY", "bad_arg", "bad_arg2"]])
def test_bad_filters_are_syntax_errors(r, args):
    with pytest.raises(redis.ResponseError, match="syntax error"):
        raw_cmd(r, "COMMAND", "LIST", *args)
