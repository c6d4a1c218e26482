"""Ctrl-C while the command line starts: exit 130 and one line, not a traceback.

A real SIGINT sent at a moment a test cannot hit reliably (a few milliseconds
of imports) is replaced by one the child sends itself from an import hook, at
the exact import it names.
"""

import os
import subprocess
import sys

import pytest

# The child sets the handler it relies on (a background job starts with SIGINT ignored), then signals itself
# when the import named in argv[1] begins, as a Ctrl-C landing there would.
CHILD = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
target = sys.argv[1]

class CtrlCAt:
    def find_spec(self, name, path=None, target_=None):
        if name == target:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlCAt())
from spartition.cli.main import main
sys.exit(main(["info", "chain:n=3", "--json"]))
"""


def run_child(module: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD, module], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SPARTITION_DEBUG": ""})


@pytest.mark.skipif(os.name != "posix", reason="SIGINT")
@pytest.mark.parametrize("module", ["spartition.core.registry", "spartition.cli.dags"])
def test_ctrl_c_while_the_commands_load_exits_130(module):
    # the registry (importlib.metadata's entry points, then every command module) was imported with
    # spartition.cli.main, before main() had set its handler: a Ctrl-C there printed a traceback
    proc = run_child(module)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "interrupted" in proc.stderr
    assert proc.stdout.strip() == '{"error": "interrupted", "kind": "KeyboardInterrupt"}'


def test_the_entry_point_loads_only_what_main_needs_before_its_handler():
    # everything imported with spartition.cli.main runs before main() sets the Ctrl-C handler
    code = ("import sys, spartition.cli.main; "
            "print(sorted(m for m in sys.modules if m.startswith('spartition.') and m not in "
            "('spartition.cli', 'spartition.cli.main', 'spartition.cli.common', 'spartition.errors', "
            "'spartition.settings')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
