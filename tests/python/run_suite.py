"""Runs one tests/python suite as CTest does: `python run_suite.py test_name`.

unittest exits 0 when every test of a suite was skipped (torch missing, say), which CTest
would report as "Passed". This runner exits 77 instead — the SKIP_RETURN_CODE that
python/CMakeLists.txt gives these tests — so that CTest reports such a suite as Skipped,
never passed. Failures and errors exit 1, as unittest does."""

import sys
import unittest

SKIPPED = 77


def main(argv):
    if len(argv) != 2:
        print("usage: run_suite.py TEST_MODULE", file=sys.stderr)
        return 2
    suite = unittest.defaultTestLoader.loadTestsFromName(argv[1])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.testsRun > 0 and len(result.skipped) == result.testsRun:
        print(f"{argv[1]}: every test skipped ({result.skipped[0][1]})")
        return SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
