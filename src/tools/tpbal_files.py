"""tpbal_files: the files the tools read and write, and the one error they fail with.

Every file a tool reads is a bounded regular UTF-8 file (a FIFO would hang the reader);
every file it writes is written whole or not at all, never through a link and never over
one of its inputs (doc/ARCHITECTURE.md, "Files are written safely"). Messages name the
file cleaned of what a terminal cannot take (clean). A long run says how far it is
(Progress).
"""
import os
import secrets
import stat
import sys
import time


class BadInput(Exception):
    """Bad input: one line, exit code 2."""


def _unprintable(c):
    """A character no terminal, log line, CSV reader or XML 1.0 document should get raw:
    C0 and C1 controls (ESC, BEL, CR, ...), DEL, a lone surrogate, U+FFFE and U+FFFF."""
    o = ord(c)
    return o < 32 or 127 <= o < 160 or 0xD800 <= o <= 0xDFFF or o in (0xFFFE, 0xFFFF)


def clean(s, limit=200):
    """s for a terminal, one log line, a CSV field or XML: what cannot go there raw
    (_unprintable) as '?', cut."""
    s = str(s)
    out = "".join("?" if _unprintable(c) else c for c in s)
    return out if len(out) <= limit else out[:limit - 3] + "..."


def regular_file(path, what):
    """Refuse anything but a regular file (a FIFO would hang the reader)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise BadInput("cannot read %s %s: %s" % (what, clean(path), e.strerror or e))
    if stat.S_ISDIR(st.st_mode):
        raise BadInput("%s %s is a directory, not a file" % (what, clean(path)))
    if not stat.S_ISREG(st.st_mode):
        raise BadInput("%s %s is not a regular file (a FIFO, socket or device): give a file"
                       % (what, clean(path)))
    return st


def read_text(path, what, limit):
    """The whole of a regular file of at most limit bytes, as UTF-8 text."""
    st = regular_file(path, what)
    if st.st_size > limit:
        raise BadInput("%s %s is %d bytes, more than the %d this tool reads"
                       % (what, clean(path), st.st_size, limit))
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as e:
        raise BadInput("cannot read %s %s: %s" % (what, clean(path), e.strerror or e))
    if len(data) > limit:
        raise BadInput("%s %s is larger than the %d bytes this tool reads"
                       % (what, clean(path), limit))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput("%s %s is not UTF-8 text (byte %d): is it a tpbal result?"
                       % (what, clean(path), e.start))


# the files the tools read: never written over by a tool's output
READ_NAMES = ("results.jsonl", "results.csv", "ranks.csv")


def _is_input(target, inputs):
    """target is one of the inputs, or a file a tool reads in an input's folder."""
    for i in inputs:
        if os.path.exists(i) and os.path.exists(target) and os.path.samefile(i, target):
            return True
        folder = i if os.path.isdir(i) else os.path.dirname(i) or "."
        name = os.path.basename(target)
        if (os.path.isdir(folder) and os.path.samefile(folder, os.path.dirname(target) or ".")
                and (name in READ_NAMES or (name.startswith("trace") and name.endswith(".json")))):
            return True
    return False


def write_atomic(path, data, inputs=()):
    """Write data (text or bytes) to path as a whole or not at all, never through a link:
    the folder opened once, a new temporary beside the target (O_EXCL | O_NOFOLLOW, an
    unpredictable name) written, synced and renamed over the target only if that is a
    regular file or nothing. A link, a directory, a device or FIFO, any of the inputs or a
    file a tool reads in an input's folder is refused in one line and left as it is. A new
    file gets 0666 less the umask (as every other file the user makes); a replaced one keeps
    its mode."""
    folder, name = os.path.split(path)
    folder = folder or "."
    if not name or name in (".", ".."):
        raise BadInput("%s: give a file name" % clean(path))
    try:
        dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        raise BadInput("cannot write %s: %s" % (clean(path), e.strerror or e))
    tmp = None
    try:
        keep = _target_mode(dfd, name, path)
        if _is_input(os.path.join(folder, name), inputs):
            raise BadInput("%s is one of the inputs: write the output elsewhere" % clean(path))
        for _ in range(16):
            tmp = ".%s.tpbal-%s" % (name, secrets.token_hex(6))
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666,
                             dir_fd=dfd)
                break
            except FileExistsError:
                tmp = None
        if tmp is None:
            raise BadInput("cannot write %s: no temporary name was free" % clean(path))
        with os.fdopen(fd, "wb") as fh:
            if keep is not None:
                os.fchmod(fh.fileno(), keep)
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        _target_mode(dfd, name, path)  # still a regular file or nothing
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        tmp = None
    except OSError as e:
        raise BadInput("cannot write %s: %s" % (clean(path), e.strerror or e))
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
        os.close(dfd)


def _target_mode(dfd, name, path):
    """The mode of the regular file at name (None if there is none); a link or anything but
    a regular file is refused."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise BadInput("%s is a symbolic link: the tools write nothing through a link (it is "
                       "left as it is); remove it or write somewhere else" % clean(path))
    if stat.S_ISDIR(st.st_mode):
        raise BadInput("%s is a directory: give a file name" % clean(path))
    if not stat.S_ISREG(st.st_mode):
        raise BadInput("%s is not a regular file: give a file name" % clean(path))
    return stat.S_IMODE(st.st_mode)


TOOL = ["tpbal", time.monotonic(), 5.0]  # the tool's name, its start, the next line's time


class Progress:
    """Lines on stderr from the long loops of a tool that has run 5 s, one at most every 5 s
    ("tpbal-plan: validating the models (10-fold): 3000 of 10000 configs, 12 s"); nothing from
    a tool that ends sooner."""

    def __init__(self, what, total, unit="configs"):
        self.what, self.total, self.unit = what, total, unit

    def step(self, done):
        dt = time.monotonic() - TOOL[1]
        if dt >= TOOL[2]:
            print("%s: %s: %d of %d %s, %.0f s" % (TOOL[0], self.what, done, self.total,
                                                   self.unit, dt), file=sys.stderr)
            sys.stderr.flush()
            TOOL[2] = dt + 5.0
