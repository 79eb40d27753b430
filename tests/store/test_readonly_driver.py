"""The hooks load SQLite's C driver without the `functools` package (pinky.store.readonly._without_functools):
the driver's statement cache must work as with the real package, and whoever imports functools later gets it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECK = """
import sys
from pinky.store.readonly import sqlite_module
driver = sqlite_module()
assert "functools" not in sys.modules, "functools was loaded"
conn = driver.connect(sys.argv[1])
conn.execute("CREATE TABLE t(x)")
conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(50)])
for i in range(400):  # more distinct statements than the cache holds (128): it evicts and reuses
    sql = f"SELECT count(*) FROM t WHERE x < {i % 200}"
    assert conn.execute(sql).fetchone()[0] == min(i % 200, 50)
import functools
assert functools.reduce(lambda a, b: a + b, [1, 2, 3]) == 6 and hasattr(functools, "partial")
print("ok")
"""


def test_the_driver_loaded_without_functools_caches_statements_and_leaves_the_real_package(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", CHECK, str(tmp_path / "t.db")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
