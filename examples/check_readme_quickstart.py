#!/usr/bin/env python3
"""Checks that the demo output shown in README.md's "## Quick start" section is what the quickstart
binary prints. The output block is the first fenced block of that section without a language tag;
a line that is exactly "..." in it stands for one or more lines of output. Exits 1 with a diff when
they differ (ctest: readme_quickstart)."""

import argparse
import difflib
import subprocess
import sys

ELLIPSIS = "..."


def quickstart_block(readme_path):
    """The lines of the first untagged fenced block under "## Quick start"."""
    with open(readme_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        start = lines.index("## Quick start")
    except ValueError:
        sys.exit(f"{readme_path}: no '## Quick start' heading")
    block, inside = None, False
    for line in lines[start + 1:]:
        if not inside and line.startswith("## "):
            break  # the next section: no output block found
        if line.startswith("```"):
            if inside:
                if block is not None:
                    return block
                inside = False
            else:
                inside = True
                if line.strip() == "```":
                    block = []
            continue
        if inside and block is not None:
            block.append(line)
    sys.exit(f"{readme_path}: no untagged fenced output block under '## Quick start'")


def matches(expected, actual):
    """Whether actual matches expected, where an ELLIPSIS line matches one or more lines."""
    memo = {}

    def go(i, j):
        key = (i, j)
        if key not in memo:
            if i == len(expected):
                result = j == len(actual)
            elif expected[i] == ELLIPSIS:
                result = any(go(i + 1, k) for k in range(j + 1, len(actual) + 1))
            else:
                result = j < len(actual) and expected[i] == actual[j] and go(i + 1, j + 1)
            memo[key] = result
        return memo[key]

    return go(0, 0)


def expand(expected, actual):
    """expected with each ELLIPSIS replaced by the output lines it most plausibly stands for (up to
    the next line of expected found in the output), so that a diff shows only real differences."""
    out, j = [], 0
    for i, line in enumerate(expected):
        if line != ELLIPSIS:
            out.append(line)
            if j < len(actual) and actual[j] == line:
                j += 1
            continue
        following = next((e for e in expected[i + 1:] if e != ELLIPSIS), None)
        end = len(actual)
        if following is not None:
            found = [k for k in range(j + 1, len(actual)) if actual[k] == following]
            end = found[0] if found else j + 1
        end = max(end, min(j + 1, len(actual)))
        out.extend(actual[j:end] if end > j else [ELLIPSIS])
        j = end
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--readme", required=True)
    parser.add_argument("--binary", required=True, help="the built quickstart executable")
    args = parser.parse_args()

    expected = quickstart_block(args.readme)
    run = subprocess.run([args.binary], capture_output=True, text=True, timeout=120)
    actual = run.stdout.splitlines()
    if run.returncode != 0:
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        sys.exit(f"{args.binary} exited with status {run.returncode}")
    if matches(expected, actual):
        print(f"README.md's quick-start output matches {args.binary} ({len(actual)} lines)")
        return
    print(f"README.md's quick-start output differs from what {args.binary} prints "
          f"('{ELLIPSIS}' lines in the README stand for one or more lines):")
    diff = difflib.unified_diff(expand(expected, actual), actual, "README.md (Quick start)",
                                "quickstart output", lineterm="")
    for line in diff:
        print(line)
    sys.exit(1)


if __name__ == "__main__":
    main()
