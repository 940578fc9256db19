"""Hosts on one switched network, for the high-availability drill (bench/ha.py): a network
namespace per host, each joined by a veth pair to a bridge in this namespace (the switch), on
an address range of the drill's own (10.79.N.0/24). The hosts reach each other through the
bridge; this namespace (the clients, the drill) reaches every host at its address.

A partition cuts one host off: its end of the veth goes down, so nothing goes in or out (TCP
connections to it stay open and hang, as over a dead link), until ``heal``.

Only addresses and interfaces it made itself; ``close`` deletes them all (the veths go with their
namespaces).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass


def free_subnet(first: int) -> str:
    """A 10.79.N prefix no interface here uses yet (another drill may run beside this one)."""
    shown = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True)
    used = set(re.findall(r"inet 10\.79\.(\d+)\.", shown.stdout))
    for n in range(250):
        candidate = (first + n) % 250
        if str(candidate) not in used:
            return f"10.79.{candidate}"
    raise NoNamespaces("no free 10.79.N.0/24 subnet left")


class NoNamespaces(RuntimeError):
    """Network namespaces cannot be made here (not root, or no ``ip``)."""


def _ip(*argv: str) -> None:
    done = subprocess.run(["ip", *argv], capture_output=True, text=True, timeout=10, check=False)
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, ["ip", *argv], stderr=done.stderr)


@dataclass
class NetHost:
    name: str  # the namespace
    address: str
    inner: str  # its end of the veth pair

    @property
    def prefix(self) -> tuple[str, ...]:
        """The command that runs a process on this host."""
        return ("ip", "netns", "exec", self.name)


class Switch:
    """``count`` hosts on a bridge. Raises NoNamespaces where that cannot be done."""

    def __init__(self, count: int) -> None:
        if os.geteuid() != 0:
            raise NoNamespaces("network namespaces need root")
        tag = os.getpid() % 100_000
        self.subnet = free_subnet(os.getpid() % 250)
        self.bridge = f"crb{tag}"
        self.gateway = f"{self.subnet}.1"  # this namespace's address on the switch
        self.hosts: list[NetHost] = []
        self.made_bridge = False
        try:
            _ip("link", "add", self.bridge, "type", "bridge")
            self.made_bridge = True
            _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")
            for i in range(count):
                self._add_host(tag, i)
        except (OSError, subprocess.CalledProcessError) as exc:
            self.close()
            detail = getattr(exc, "stderr", "") or exc
            raise NoNamespaces(f"cannot make network namespaces: {detail}") from exc

    def _add_host(self, tag: int, i: int) -> None:
        host = NetHost(f"crha{tag}h{i}", f"{self.subnet}.{11 + i}", f"crha{tag}i{i}")
        outer = f"crha{tag}o{i}"
        _ip("netns", "add", host.name)
        self.hosts.append(host)
        _ip("link", "add", outer, "type", "veth", "peer", "name", host.inner)
        _ip("link", "set", host.inner, "netns", host.name)
        _ip("link", "set", outer, "master", self.bridge)
        _ip("link", "set", outer, "up")
        inside = ("netns", "exec", host.name, "ip")
        _ip(*inside, "addr", "add", f"{host.address}/24", "dev", host.inner)
        _ip(*inside, "link", "set", host.inner, "up")
        _ip(*inside, "link", "set", "lo", "up")

    def partition(self, host: NetHost) -> None:
        """Cut ``host`` off the network (its link down)."""
        _ip("netns", "exec", host.name, "ip", "link", "set", host.inner, "down")

    def heal(self, host: NetHost) -> None:
        _ip("netns", "exec", host.name, "ip", "link", "set", host.inner, "up")

    @property
    def made(self) -> list[str]:
        return [h.name for h in self.hosts] + ([self.bridge] if self.made_bridge else [])

    def close(self) -> None:
        for host in self.hosts:
            subprocess.run(["ip", "netns", "del", host.name], capture_output=True, check=False)
        if self.made_bridge:
            subprocess.run(["ip", "link", "del", self.bridge], capture_output=True, check=False)
        self.hosts, self.made_bridge = [], False

    def __enter__(self) -> Switch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
