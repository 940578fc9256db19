"""Where the work of bench/webhooks.py's phases went (the pick's cost with endpoints, issue 36)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Meter:
    """Where the work of each phase went: CPU seconds of the server's processes (master and
    workers) and of the deliverer, and the database's commits (``pg_stat_database``, flushed
    by PostgreSQL about once a second: approximate at a phase's edges)."""

    url: str
    pids: list[int]
    last: tuple[float, ...] = ()
    sums: dict[str, list[float]] = field(default_factory=dict)

    def sample(self) -> tuple[float, ...]:
        import psutil
        import psycopg

        cpu = []
        for pid in self.pids:
            root = psutil.Process(pid)
            times = [p.cpu_times() for p in [root, *root.children(recursive=True)]]
            cpu.append(sum(t.user + t.system for t in times))
        with psycopg.connect(self.url, autocommit=True) as conn:
            query = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
            row = conn.execute(query).fetchone()
        return (*cpu, float(row[0]) if row else 0.0)

    def mark(self, phase: str | None = None) -> None:
        now = self.sample()
        if phase is not None:
            spent = [b - a for a, b in zip(self.last, now, strict=True)]
            self.sums[phase] = [x + y for x, y in zip(self.sums.get(phase, [0.0] * len(now)),
                                                      spent, strict=True)]  # fmt: skip
        self.last = now

    def report(self, *picks: int) -> dict[str, dict[str, float]]:
        names = ["server CPU s", "deliverer CPU s"][: len(self.pids)] + ["database commits"]
        found = {}
        for (phase, sums), count in zip(self.sums.items(), picks, strict=True):
            found[phase] = {name: round(value, 2) for name, value in zip(names, sums, strict=True)}
            found[phase]["server CPU ms per pick"] = round(1000 * sums[0] / max(count, 1), 2)
        return found
