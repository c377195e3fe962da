"""The zygote: one Python interpreter per fit() that has imported tunerun's
rank modules and cloudpickle (never torch, never the user's code) and forks
fresh Python ranks on request, so a rank costs a fork instead of an
interpreter start. Each rank unpickles the trainable itself: the user's
modules (torch) may start threads, and a threaded zygote forks no more.

Started by tune/launch/local/zygote.cpp (ZygoteLauncher) as `python3 -S -c
<bootstrap> REF` (_reference.zygote_argv: REF holds the driver's sys.path)
with its end of a socketpair on fd 3.
A request names one rank: its argv (the rank's usual `python3 -S -c
BOOTSTRAP REF` command line), whole environment, working directory, log file
and process group. The zygote forks an intermediate process that forks the
rank and exits; the driver is a child subreaper, so the rank is re-parented
to it and becomes its child, as an exec'd rank is: the driver waits on it,
gets its exit status and kills its process group as usual. The reply is the
rank's pid, or "error: ..." (the driver then starts that rank by exec).

The rank, before the user's module is imported: joins its process group,
waits until it is the driver's child (the worker runtime checks its parent),
takes the log as stdout/stderr and /dev/null as stdin, the request's
environment and working directory, then runs the rank's bootstrap as `python3
-c` would, ending as the interpreter does (non-daemon threads joined, atexit
handlers run, exit status as sys.exit's). Differences from an exec'd rank:
the string hash seed is the zygote's (the same in every rank), and modules
the zygote imported are not imported again.

The zygote stays single-threaded (fork of a threaded process is unsafe): it
refuses requests once it has a second thread, and exits when the driver
closes its end of the socket.
"""

import atexit
import os
import sys

# What a rank imports before the user's module, loaded once here.
import tunerun._worker  # noqa: F401
import tunerun.train.checkpoint  # noqa: F401
import tunerun.train.session  # noqa: F401
import tunerun.tune  # noqa: F401

_SOCKET_FD = 3
_zygote_pid = None


def zygote_pid():
    """The zygote's pid, in a rank it forked (for tests that kill it)."""
    return _zygote_pid


def _read_exact(fd, n):
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _send(fd, text):
    data = text.encode()
    os.write(fd, len(data).to_bytes(4, "little") + data)


def _preload():
    """cloudpickle, which unpickling a script's trainable imports, from the
    driver's sys.path; a rank sets its own sys.path again."""
    from tunerun import _reference
    if len(sys.argv) > 1:
        _reference.use_sys_path(_reference.decode(sys.argv[1]))
    try:
        import cloudpickle  # noqa: F401
    except ImportError:
        pass  # the driver pickled with it, so a rank finds it on the driver's sys.path


def main(fd=_SOCKET_FD):
    global _zygote_pid
    _zygote_pid = os.getpid()
    _preload()
    while True:
        header = _read_exact(fd, 4)
        if header is None:
            os._exit(0)  # the driver closed its end: fit() is over
        request = _read_exact(fd, int.from_bytes(header, "little"))
        if request is None:
            os._exit(0)
        try:
            if len(os.listdir("/proc/self/task")) != 1:
                raise OSError("the zygote has more than one thread; it forks no more ranks")
            reply = str(_launch(fd, request.decode().split("\0")))
        except OSError as e:
            reply = f"error: {e}"
        _send(fd, reply)


def _launch(sock, fields):
    """Forks the rank `fields` describes (see ZygoteLauncher::fork_rank) through
    an intermediate process; returns its pid once it is the driver's child."""
    cwd, log, pgid, nargs = fields[0], fields[1], int(fields[2]), int(fields[3])
    argv, env = fields[4:4 + nargs], fields[4 + nargs:]
    pid_r, pid_w = os.pipe()
    go_r, go_w = os.pipe()
    middle = os.fork()
    if middle == 0:
        try:
            os.close(pid_r)
            os.close(go_w)
            rank = os.fork()
            if rank == 0:
                os.close(pid_w)
                _become_rank(sock, go_r, argv, env, cwd, log, pgid)
            # As a shell does: parent and child both set the group, so it is
            # set before anyone can signal the group, whichever runs first.
            try:
                os.setpgid(rank, pgid or rank)
            except OSError:
                pass
            os.write(pid_w, str(rank).encode())
        finally:
            os._exit(0)
    os.close(pid_w)
    os.close(go_r)
    try:
        pid = os.read(pid_r, 32)
        os.waitpid(middle, 0)  # the intermediate is gone: the rank is the driver's now
        try:
            os.write(go_w, b"1")
        except BrokenPipeError:
            pass  # the rank is gone already: the driver sees its exit status
    finally:
        os.close(pid_r)
        os.close(go_w)
    if not pid:
        raise OSError("could not fork the rank")
    return int(pid)


def _become_rank(sock, go_r, argv, env, cwd, log, pgid):
    """The forked rank's side: sets itself up as ChildProcess::spawn would,
    runs the rank's program and exits with its status. Never returns."""
    status = 127
    try:
        os.close(sock)
        os.setpgid(0, pgid)  # 0: lead a new group
        os.read(go_r, 1)
        os.close(go_r)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        if cwd:
            os.chdir(cwd)
        os.environ.clear()
        os.environ.update(var.split("=", 1) for var in env if "=" in var)
        # `python3 -S -c SOURCE ARGS...` has sys.argv == ["-c", ARGS...].
        sys.argv[:] = ["-c"] + argv[4:]
        status = _run(argv[3])
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        os._exit(status)


def _run(source):
    """Runs `source` as the main program; the exit status the interpreter
    would give it."""
    try:
        exec(compile(source, "<string>", "exec"), {"__name__": "__main__",
                                                   "__builtins__": __builtins__})
        status = 0
    except SystemExit as e:
        status = _exit_status(e.code)
    except KeyboardInterrupt:
        # As the interpreter: die by SIGINT, so the status says so.
        import signal
        _finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        status = 130
    except BaseException:
        import traceback
        traceback.print_exc()
        status = 1
    _finish()
    return status


def _finish():
    # Py_FinalizeEx's order: non-daemon threads, then atexit handlers.
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _exit_status(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
