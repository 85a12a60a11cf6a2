"""Which TCP sockets this process listens on, from /proc (no ``ss``): the process's socket inodes
(``/proc/self/fd``) matched against the kernel's tables (``/proc/net/tcp``, ``tcp6``) in state
LISTEN. Loaded by path from the test scripts and workloads; the standard library only."""

import os

LISTEN = "0A"
LOOPBACK = {"0100007F", "00000000000000000000000001000000"}   # 127.0.0.1, ::1 (as /proc writes them)


def _socket_inodes(pid: str) -> set[str]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def listeners(pid: str = "self") -> list[tuple[str, int, bool]]:
    """(address as /proc writes it, port, on loopback only) for each listening TCP socket."""
    mine = _socket_inodes(pid)
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            local, state, inode = cols[1], cols[3], cols[9]
            if state == LISTEN and inode in mine:
                addr, port = local.split(":")
                low = addr.upper()
                loop = low in LOOPBACK or (len(low) == 8 and low.endswith("7F")) \
                    or low == "0000000000000000FFFF00000100007F"
                found.append((addr, int(port, 16), loop))
    return found


def not_loopback(pid: str = "self") -> list[str]:
    """The listening sockets of the process that another machine could reach."""
    return [f"{addr}:{port}" for addr, port, loop in listeners(pid) if not loop]
