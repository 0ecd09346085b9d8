"""Resource checks made before work starts (:mod:`stumpcheck.numerics.resources`)."""

from __future__ import annotations

import pytest

from stumpcheck.numerics.precision import InputError
from stumpcheck.numerics.resources import (MAX_ARRAY_BYTES, available_memory, check_writable_dir, check_writable_file,
                                require_memory)


def test_available_memory_is_positive_where_it_can_be_read():
    free = available_memory()
    assert free is None or free > 0


def test_require_memory_refuses_more_than_the_cap_and_accepts_a_little():
    require_memory(1024, "a kilobyte")
    with pytest.raises(InputError, match="of memory, above the limit"):
        require_memory(MAX_ARRAY_BYTES + 1, "too much")
    free = available_memory()
    if free is not None and free < MAX_ARRAY_BYTES:
        with pytest.raises(InputError, match="is available"):
            require_memory(free + 2 ** 30, "more than is free")


def test_writable_dir_probes_leave_nothing_behind(tmp_path):
    check_writable_dir(tmp_path, "--out")
    check_writable_dir(tmp_path / "new" / "nested", "--out")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("make_path", [
    lambda tmp: tmp / "file" / "sub",  # below a regular file
    lambda tmp: tmp / "file",  # a regular file
])
def test_writable_dir_refuses_paths_that_cannot_be_folders(tmp_path, make_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="--out"):
        check_writable_dir(make_path(tmp_path), "--out")


def test_writable_file_needs_an_existing_folder_and_not_a_directory(tmp_path):
    check_writable_file(tmp_path / "out.json", "--out")
    with pytest.raises(InputError, match="does not exist"):
        check_writable_file(tmp_path / "missing" / "out.json", "--out")
    with pytest.raises(InputError, match="is a directory"):
        check_writable_file(tmp_path, "--out")
    assert list(tmp_path.iterdir()) == []
