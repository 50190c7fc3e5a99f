"""Shims that let happybase's own test suite (tests/test_api.py from its source
distribution) run under pytest against any Thrift gateway: the file uses nose's
assert_raises without importing it, and hands HAPPYBASE_PORT over as a string, so the port
comes from CELLAR_THRIFT_PORT (an integer) through happybase's default instead."""

import builtins
import os

import happybase.connection
import pytest

builtins.assert_raises = pytest.raises
happybase.connection.DEFAULT_PORT = int(os.environ.get("CELLAR_THRIFT_PORT", "9090"))
