"""Who may have written a cache folder, creating folders and files private to the user, removing the
temporary folders of killed processes, and the one-time warnings the cache gives when it degrades.

The rule for trusting what is on disk (unless ``TRITIUM_CACHE_TRUST_SHARED=1``): the cache root, its entry
folders (and the shard folders of the older layout) and files must be owned by the current user and
writable by no one else, and every folder above the root must be owned by the user or by root and be
writable by no one else unless it has the sticky bit (like /tmp), so that no other user can swap a folder
of the path for one of theirs. A loaded object file is code that runs in the process: a file someone else
could have written is never loaded. Where the root fails the rule: a root of ours loses the others' write
permission; a sticky shared root (mode 1777) owned by us or root gets a private ``user-<uid>`` folder;
anything else is not used and kernels compile in memory only. Each case warns once per process.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import sys
import time
import warnings
from typing import Optional

#: a temporary or trash folder older than this, whose process is gone, was left by a killed process
STALE_SECONDS = 600
#: folders of the cache root holding files whose temporaries are swept (besides the two-letter shards)
SWEPT_SUBFOLDERS = ("autotune", )
_SWEEP_MARK = ".swept"


class CacheWarning(UserWarning):
    """The kernel cache could not be used as configured; kernels still compile and run."""


_warned: set = set()


def warn_once(tag: object, message: str) -> None:
    if tag in _warned:
        return
    _warned.add(tag)
    # point at the user's line that compiled or launched the kernel, not at tritium's internals
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(0), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, CacheWarning, stacklevel=level)


def _uid() -> Optional[int]:
    return os.geteuid() if hasattr(os, "geteuid") else None


def describe_error(exc: OSError) -> str:
    code = errno.errorcode.get(exc.errno or 0, "")
    return f"[Errno {exc.errno}{' ' + code if code else ''}] {exc.strerror or exc}"


def owner_problem(st: os.stat_result) -> Optional[str]:
    """Why a file or folder with this stat cannot be trusted, or None."""
    uid = _uid()
    if uid is None:
        return None
    if st.st_uid != uid:
        return f"it is owned by uid {st.st_uid}, not by you (uid {uid})"
    if st.st_mode & 0o022:
        who = "its group and others" if st.st_mode & 0o022 == 0o022 else (
            "its group" if st.st_mode & 0o020 else "other users")
        return f"{who} can write to it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def ancestor_problem(path: str) -> Optional[tuple[str, str]]:
    """(folder, why) for the first folder above ``path`` through which another user could replace it."""
    uid = _uid()
    if uid is None:
        return None
    parent = os.path.dirname(os.path.realpath(path))
    while True:
        try:
            st = os.stat(parent)
        except OSError:
            st = None   # not there yet: it will be created private, but what is above it counts
        if st is not None and st.st_uid not in (uid, 0):
            return parent, f"it is owned by uid {st.st_uid}"
        if st is not None and st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            return parent, f"other users can write to it (mode {stat.S_IMODE(st.st_mode):o}, no sticky bit)"
        up = os.path.dirname(parent)
        if up == parent:
            return None
        parent = up


def make_dirs(path: str, private: bool) -> None:
    """``os.makedirs``, but every folder it creates is 0700 whatever the umask (when ``private``)."""
    missing = []
    p = os.path.abspath(path)
    while not os.path.isdir(p):
        missing.append(p)
        up = os.path.dirname(p)
        if up == p:
            break
        p = up
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700 if private else 0o777)
        except FileExistsError:
            if not os.path.isdir(d):
                raise
            continue
        if private:
            os.chmod(d, 0o700)


def write_new_file(path: str, data: bytes, private: bool) -> None:
    """Create ``path`` (which must not exist; links are not followed) holding ``data``: 0600 when private."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600 if private else 0o666)
    try:
        if private and hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def read_trusted(path: str, check: bool) -> bytes:
    """The bytes of a regular file, not through a link; with ``check``, ValueError if it is not trusted."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedEntry(path, "it is not a regular file")
        if check:
            why = owner_problem(st)
            if why:
                raise UntrustedEntry(path, why)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class UntrustedEntry(Exception):
    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


def check_folder(path: str) -> None:
    """UntrustedEntry unless ``path`` is a real folder (not a link) that only we can write."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UntrustedEntry(path, "it is not a folder")
    why = owner_problem(st)
    if why:
        raise UntrustedEntry(path, why)


def trust_advice() -> str:
    return ("if everyone who can write there is trusted, set TRITIUM_CACHE_TRUST_SHARED=1; otherwise point "
            "TRITON_CACHE_DIR at a folder of your own")


def resolve_root(root: str, create: bool) -> Optional[str]:
    """The folder this process may read and write cache entries in, or None (compile in memory only).

    A root of ours that others can write to (an older tritium made it under umask 002) loses that
    permission. A root others can write to is not used; if it is a sticky shared folder (mode 1777, like
    /tmp) that only we or root own, the private per-user folder ``<root>/user-<uid>`` is used instead.
    Raises OSError when ``create`` and the folder cannot be made."""
    bad = ancestor_problem(root)
    if bad is not None:
        warn_once(("ancestor", root), f"tritium: the kernel cache {root} is not used because another user "
                  f"could replace it: the folder {bad[0]} above it is not safe ({bad[1]}); kernels "
                  f"compile in memory only; {trust_advice()}")
        return None
    try:
        st = os.stat(root)
    except FileNotFoundError:
        if not create:
            return root
        make_dirs(root, private=True)
        st = os.stat(root)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), root)
    why = owner_problem(st)
    if why is None:
        return root
    uid = _uid()
    sticky = bool(st.st_mode & stat.S_ISVTX)
    if st.st_uid == uid and not sticky:
        try:
            os.chmod(root, stat.S_IMODE(st.st_mode) & ~0o022)
        except OSError as exc:
            why = f"{why}, and that cannot be changed ({describe_error(exc)})"
        else:
            warn_once(("tightened", root), f"tritium: the kernel cache {root} was not private ({why}): "
                      "write permission for others is removed; entries others could have changed are compiled "
                      "again")
            return root
    elif sticky and st.st_uid in (uid, 0):
        mine = os.path.join(root, f"user-{uid}")
        try:
            if create:
                try:
                    os.mkdir(mine, 0o700)
                    os.chmod(mine, 0o700)
                except FileExistsError:
                    pass
            if os.path.lexists(mine):
                check_folder(mine)
            warn_once(("shared", root), f"tritium: entries of the kernel cache {root} are not loaded because "
                      f"{why}; kernels are cached in your private folder {mine} instead; {trust_advice()}")
            return mine
        except UntrustedEntry as exc:
            why = f"{why}, and its per-user folder {mine} is not safe ({exc.why})"
    elif sticky:
        why = f"{why} and its owner (uid {st.st_uid}) can remove or replace what others put there"
    warn_once(("shared", root), f"tritium: the kernel cache {root} is not used because {why}; kernels "
              f"compile in memory only; {trust_advice()}")
    return None


# --- temporaries of killed processes ----------------------------------------------------------------

_TEMP_PID = re.compile(r"(?:^\.tmp-|\.trash-)(?:[0-9a-f]{64}-)?(?P<pid>\d+)-[A-Za-z0-9_]+$")
# torch inductor's TritonBundler restores an entry in ``tmp.<uuid4>`` beside it, then renames it into place
_BUNDLER_TEMP = re.compile(r"tmp\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_swept: set = set()


def temp_name_pid(name: str) -> tuple[bool, Optional[int]]:
    """(is a temporary or trash name, the pid recorded in it or None)."""
    if _BUNDLER_TEMP.fullmatch(name):
        return True, None
    if not (name.startswith(".tmp-") or ".trash-" in name):
        return False, None
    m = _TEMP_PID.search(name)
    return True, int(m.group("pid")) if m else None


def pid_alive(pid: int) -> bool:
    # os.kill(pid, 0) is a liveness probe on POSIX only (on Windows it would send CTRL_C_EVENT), and
    # pid 0 would probe our own process group: when in doubt, the process is alive
    if pid <= 0 or pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True   # it exists but belongs to someone else
    return True


def sweep_folder(folder: str, now: Optional[float] = None) -> None:
    """Remove the temporaries in ``folder`` that are older than STALE_SECONDS, ours, and whose recorded
    process is gone. A live process's temporary is never touched."""
    now = time.time() if now is None else now
    uid = _uid()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for e in entries:
        is_temp, pid = temp_name_pid(e.name)
        if not is_temp:
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if (uid is not None and st.st_uid != uid) or now - st.st_mtime < STALE_SECONDS:
            continue
        if pid is not None and pid_alive(pid):
            continue
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(e.path, ignore_errors=True)
        else:
            try:
                os.unlink(e.path)
            except OSError:
                pass


def sweep_root(root: str) -> None:
    """Sweep the cache folder (where entries are written), the legacy shards and the autotuner's folders, at
    most once per process and once per STALE_SECONDS across processes (a marker file's age says when the
    last sweep was)."""
    if root in _swept:
        return
    _swept.add(root)
    mark = os.path.join(root, _SWEEP_MARK)
    now = time.time()
    try:
        if now - os.stat(mark).st_mtime < STALE_SECONDS:
            return
    except OSError:
        pass
    try:
        os.close(os.open(mark, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600))
        os.utime(mark, (now, now))
    except OSError:
        return   # a read-only cache: nothing could be removed either
    sweep_folder(root, now)
    try:
        children = list(os.scandir(root))
    except OSError:
        return
    for e in children:
        if not e.is_dir(follow_symlinks=False):
            continue
        if len(e.name) == 2 or e.name in SWEPT_SUBFOLDERS:
            sweep_folder(e.path, now)
        if e.name in SWEPT_SUBFOLDERS:
            for sub in os.scandir(e.path):
                if sub.is_dir(follow_symlinks=False):
                    sweep_folder(sub.path, now)
