"""js-fix-chunk: `node test.js` passes and chunk() is right on hidden cases, checked with node.

Without node on PATH the check fails: it cannot tell whether the fix works. The probe prints
one JSON line, so a module that ends the process early fails rather than passes.
"""

import json
import shutil
import subprocess
import sys

PROBE = r"""
const { chunk, chunkCount } = require('./chunk');
const out = {};
out.empty = chunk([], 3);
out.short = chunk([1, 2, 3], 5);
out.exact = chunk([1, 2, 3, 4, 5, 6], 3);
out.rest = chunk([1, 2, 3, 4, 5, 6, 7], 3);
out.ones = chunk(['x', 'y', 'z'], 1);
const input = [1, 2, 3, 4, 5];
chunk(input, 2);
out.untouched = input;
out.throws = [0, -2, 2.5, '2'].map((size) => {
  try {
    chunk([1, 2], size);
    return 'returned';
  } catch (err) {
    return err instanceof RangeError ? 'RangeError' : String(err);
  }
});
out.counts = [chunkCount(0, 4), chunkCount(8, 4), chunkCount(9, 4)];
console.log(JSON.stringify(out));
"""
WANT = {
    "empty": [],
    "short": [[1, 2, 3]],
    "exact": [[1, 2, 3], [4, 5, 6]],
    "rest": [[1, 2, 3], [4, 5, 6], [7]],
    "ones": [["x"], ["y"], ["z"]],
    "untouched": [1, 2, 3, 4, 5],
    "throws": ["RangeError"] * 4,
    "counts": [0, 2, 3],
}


def main() -> int:
    node = shutil.which("node")
    if node is None:
        print("FAIL: node is not installed, so chunk.js cannot be checked")
        return 1
    try:
        tests = subprocess.run([node, "test.js"], capture_output=True, text=True, timeout=30)
        probe = subprocess.run([node, "-e", PROBE], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        print("FAIL: node did not finish within 30 s")
        return 1
    if tests.returncode != 0 or "4 tests passed" not in tests.stdout:
        print(f"FAIL: node test.js exited {tests.returncode}:\n{tests.stderr[-1500:]}")
        return 1
    try:
        got = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"FAIL: calling chunk() failed:\n{probe.stderr[-1500:]}")
        return 1
    for key, want in WANT.items():
        if not isinstance(got, dict) or got.get(key) != want:
            print(
                f"FAIL: {key}: chunk.js gave {got.get(key) if isinstance(got, dict) else got}"
                f", expected {want}"
            )
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
