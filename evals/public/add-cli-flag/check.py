"""add-cli-flag: greet.py takes --shout (anywhere on the line), keeps its old output without it,
still rejects unknown options, and documents the flag in --help.

All invocations run in one child process (runpy, a fresh module each time) rather than one
process each: the verdict is the same, and the suite stays fast on a loaded machine. The child
reports by JSON, so agent code that exits the process early fails the check, never passes it.
"""

import json
import os
import subprocess
import sys

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

CASES = [
    (["Ann"], 0, "Hello, Ann!"),
    (["Ann", "--shout"], 0, "HELLO, ANN!"),
    (["--shout", "Bob"], 0, "HELLO, BOB!"),
    (["Ann Lee"], 0, "Hello, Ann Lee!"),
    (["Lee", "--shout"], 0, "HELLO, LEE!"),
]
HARNESS = r"""
import contextlib, io, json, runpy, sys, traceback

results = []
for args in json.loads(sys.argv[1]):
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.argv = ["greet.py", *args]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path("greet.py", run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    results.append([code, out.getvalue(), err.getvalue()])
sys.__stdout__.write("\n" + json.dumps(results) + "\n")
"""


def main() -> int:
    argvs = [args for args, _, _ in CASES] + [["--help"], ["Ann", "--whisper"]]
    try:
        child = subprocess.run(
            [sys.executable, "-c", HARNESS, json.dumps(argvs)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        results = json.loads(child.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        print("FAIL: greet.py did not finish within 60 s")
        return 1
    except (ValueError, IndexError):
        print(f"FAIL: greet.py ended the process:\n{child.stdout[-800:]}{child.stderr[-800:]}")
        return 1
    if not isinstance(results, list) or len(results) != len(argvs):
        print(f"FAIL: greet.py ended the process early:\n{child.stderr[-800:]}")
        return 1
    for (args, code, out), (got_code, got_out, got_err) in zip(
        CASES, results[: len(CASES)], strict=True
    ):
        if got_code != code or got_out.strip() != out:
            print(
                f"FAIL: python3 greet.py {' '.join(args)} gave exit {got_code}, stdout "
                f"{got_out.strip()!r}; expected exit {code}, {out!r}\n{got_err[-800:]}"
            )
            return 1
    help_code, help_out, _ = results[len(CASES)]
    if help_code != 0 or "--shout" not in help_out:
        print(f"FAIL: python3 greet.py --help does not mention --shout:\n{help_out}")
        return 1
    if results[len(CASES) + 1][0] == 0:
        print("FAIL: an unknown option (--whisper) is accepted; argparse should still reject it")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
