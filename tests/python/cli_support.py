"""What the Python tests share: the symmesh executable and the source tree, which CTest
passes in (python/CMakeLists.txt), and the CLI run as the independent path to compare with."""

import json
import os
import subprocess
import unittest

SOURCE_DIR = os.environ.get(
    "SYMMESH_SOURCE_DIR",
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BINARY = os.environ.get("SYMMESH_BINARY", os.path.join(SOURCE_DIR, "build", "symmesh"))
SCENARIOS = os.path.join(SOURCE_DIR, "scenarios")
HERE = os.path.dirname(os.path.abspath(__file__))


def run_cli(*args, timeout=240):
    """The symmesh executable's exit code, stdout and stderr (it never hangs a test)."""
    done = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def without_wall_times(value):
    """The JSON without its "wall_s" keys: how long the tool took, not what it found."""
    if isinstance(value, dict):
        return {k: without_wall_times(v) for k, v in value.items() if k != "wall_s"}
    if isinstance(value, list):
        return [without_wall_times(v) for v in value]
    return value


def cli_json(*args):
    code, out, err = run_cli(*args)
    if code != 0:
        raise AssertionError(f"symmesh {' '.join(args)} exited {code}: {err}")
    return json.loads(out)


def cli_error(*args):
    """What the CLI prints after 'symmesh: error: ' for bad input (exit code 2)."""
    code, _, err = run_cli(*args)
    if code != 2:
        raise AssertionError(f"symmesh {' '.join(args)} exited {code}, not 2: {err}")
    prefix = "symmesh: error: "
    line = err.strip().splitlines()[0]
    if not line.startswith(prefix):
        raise AssertionError(f"unexpected stderr: {err}")
    return line[len(prefix):]


class CliTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(BINARY):
            raise unittest.SkipTest(f"no symmesh executable at {BINARY} (build it first)")
