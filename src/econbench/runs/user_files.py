"""Reading the TOML files a user names: ``coffee run --config``, the base and variant files
of an experiment, ``allo run --config`` and the experiment files of ``econbench sweep``.

Only a regular file is read, and only up to :data:`MAX_USER_FILE_BYTES`: the path is
examined before it is opened, so a FIFO cannot block the command and ``/dev/zero`` cannot
fill the memory, and the read itself is bounded (a file that grows, or a ``/proc`` file
whose size says 0, is still cut off). Every problem is one :class:`UserFileError` line that
names the file and what to do.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

MAX_USER_FILE_BYTES = 1 << 20
"""1 MiB: the shipped configs and experiments are a few KB; a larger file is the wrong one."""

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
"""``O_NONBLOCK``: should the path become a FIFO between the check and the open, opening it
returns at once instead of waiting for a writer."""


class UserFileError(ValueError):
    """A file the user named cannot be used; the message is one line."""


def read_user_toml(path: Path | str, what: str = "config file") -> dict[str, Any]:
    """The tables of the TOML file at ``path``; ``what`` names it in errors
    (``"config file"``, ``"experiment file"``)."""
    import tomllib  # only when a file is given

    text = read_user_text(path, what)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserFileError(f"{path} is not valid TOML: {exc}") from None


def read_user_text(path: Path | str, what: str = "config file") -> str:
    """The UTF-8 text of the regular file at ``path``, at most ``MAX_USER_FILE_BYTES``."""
    path = Path(path)
    _check_regular(path, what, _stat(path, what))
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise _unreadable(path, what, exc) from None
    try:
        _check_regular(path, what, os.fstat(fd))  # the file opened is the file checked
        data = _read_at_most(fd, MAX_USER_FILE_BYTES + 1)
    except OSError as exc:
        raise _unreadable(path, what, exc) from None
    finally:
        os.close(fd)
    if len(data) > MAX_USER_FILE_BYTES:
        raise _too_large(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserFileError(f"{path} is not valid TOML: it is not UTF-8 text") from None


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise UserFileError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise _unreadable(path, what, exc) from None


def _check_regular(path: Path, what: str, info: os.stat_result) -> None:
    """Refuse anything but a regular file of at most the limit, before a byte is read."""
    if not stat.S_ISREG(info.st_mode):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
        raise UserFileError(f"{what} {path} is {kind}, not a TOML file; give the path of one")
    if info.st_size > MAX_USER_FILE_BYTES:
        raise _too_large(path, what)


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _too_large(path: Path, what: str) -> UserFileError:
    return UserFileError(
        f"{what} {path} is larger than {MAX_USER_FILE_BYTES >> 20} MiB; a TOML {what} is a "
        "few KB: check the path"
    )


def _unreadable(path: Path, what: str, exc: OSError) -> UserFileError:
    return UserFileError(f"cannot read {what} {path}: {exc.strerror or exc}")
